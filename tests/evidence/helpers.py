"""Reading fixture pages the way a fetch would hand them over."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from auditor.evidence import PageEvidence, read_page

PAGES = Path(__file__).resolve().parents[2] / "fixtures" / "pages"
#: A fetch time far from every fixture date, so nothing looks like render time by accident.
FETCHED_AT = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def read_fixture(
    name: str,
    *,
    url: str = "https://news.example/page",
    headers: dict[str, str] | None = None,
    fetched_at: datetime = FETCHED_AT,
    **kwargs: object,
) -> PageEvidence:
    """A fixture page read as if fetched from ``url`` with ``headers``."""
    return read_page(
        (PAGES / name).read_bytes(),
        url=url,
        headers={"Content-Type": "text/html; charset=utf-8"} if headers is None else headers,
        status=200,
        fetched_at=fetched_at,
        **kwargs,  # type: ignore[arg-type]
    )

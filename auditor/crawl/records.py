"""What a crawler tells auditor about one fetch, and what went wrong reading its log.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["FetchRecord", "LogProblem", "fetch_record"]


@dataclass(frozen=True)
class FetchRecord:
    """One fetch made by the team's crawler.

    ``fetched_at`` is aware; ``status`` the HTTP status (None: no answer, e.g. a timeout);
    ``content_hash`` the crawler's own digest of the body, when it gives one (any text:
    two fetches with the same hash are unchanged); ``body`` the bytes fetched, when they
    are at hand (a WARC, or a crawler that hands them over), and ``headers`` the
    response's. With a body, change is judged as for the audit's pages (template left
    out); with a hash only, on the hash; with neither, the fetch only dates the page.
    ``time_precision`` says how precisely the log wrote ``fetched_at`` (``day``,
    ``hour``, ``minute``, ``second``; None: exact): a date alone stands for its whole day.
    """

    url: str
    fetched_at: datetime
    status: int | None
    content_hash: str | None = None
    body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    truncated: bool = False  # the body was cut at the reader's size cap
    time_precision: str | None = None

    def __post_init__(self) -> None:
        if self.fetched_at.tzinfo is None or self.fetched_at.utcoffset() is None:
            raise ValueError(f"fetched_at must be aware, not {self.fetched_at!r}")


@dataclass(frozen=True)
class LogProblem:
    """A line (or WARC record) of a crawl log that could not be used, by code.

    ``line`` is the 1-based line number (JSON Lines, CSV: the line the row starts on) or
    the record's number in a WARC file; ``code`` one of ``bad-json``, ``bad-row``,
    ``missing-field``, ``bad-url``, ``bad-time``, ``bad-status``, ``bad-record``,
    ``line-too-long``, ``truncated-file``.
    """

    line: int
    code: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """The problem as a JSON object."""
        return {"line": self.line, "code": self.code, "detail": self.detail}


def fetch_record(value: FetchRecord | Mapping[str, Any]) -> FetchRecord:
    """A FetchRecord from itself or a mapping with the same keys (``url``,
    ``fetched_at`` aware datetime, ``status``, optional ``content_hash``, ``body``,
    ``headers``, ``time_precision``)."""
    if isinstance(value, FetchRecord):
        return value
    return FetchRecord(
        url=value["url"],
        fetched_at=value["fetched_at"],
        status=value.get("status"),
        content_hash=value.get("content_hash"),
        body=value.get("body"),
        headers=dict(value.get("headers") or {}),
        truncated=bool(value.get("truncated", False)),
        time_precision=value.get("time_precision"),
    )

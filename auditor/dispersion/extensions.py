"""What the sitemap extensions of an inventory say: shares, and news publication dates.

Two things ``auditor inspect`` reports beside the lastmod figures:

- the share of URLs with hreflang alternates, with images, with video, and of news
  entries, per site and per sub-sitemap (:func:`extension_shares`);
- for a news sitemap whose lastmod says nothing (the generation moment, one shared
  value, or none at all), whether its ``news:publication_date`` values are right as a
  signal of their own: spread (not one shared value), none in the future
  (:func:`publication_date_notes`). Such a file is reported as
  ``publication-date-right``: schedule its articles on their publication date, not on
  lastmod. A note, not a dispersion flag: it explains, it does not condemn.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from auditor.dispersion.figures import FUTURE_TOLERANCE_SECONDS

if TYPE_CHECKING:
    import pandas as pd

    from auditor.dispersion.analyse import DispersionReport

__all__ = [
    "PUBLICATION_NOTE",
    "ExtensionShares",
    "extension_shares",
    "publication_date_notes",
]

PUBLICATION_NOTE = "publication-date-right"
#: Lastmod flags that leave a news sitemap's lastmod saying nothing about its articles.
_SILENT_LASTMOD = frozenset({"generation-time", "shared-timestamp", "no-lastmod"})
#: Publication dates judged only with this many news entries (as dispersion's patterns).
MIN_NEWS_ENTRIES = 10
#: ... shared when one value carries this share of them (as a timed lastmod's).
PUBLICATION_SHARED_SHARE = 0.5
#: ... wrong when this share lies in the future (as lastmod's).
PUBLICATION_FUTURE_SHARE = 0.01


@dataclass(frozen=True)
class ExtensionShares:
    """How many URLs carry each extension, and their shares of ``urls``."""

    urls: int
    with_hreflang: int
    with_images: int
    with_video: int
    news: int

    def to_dict(self) -> dict[str, object]:
        """JSON-ready counts and shares (4 places)."""

        def share(n: int) -> float:
            return round(n / self.urls, 4) if self.urls else 0.0

        return {
            "urls": self.urls,
            "with_hreflang": self.with_hreflang,
            "share_with_hreflang": share(self.with_hreflang),
            "with_images": self.with_images,
            "share_with_images": share(self.with_images),
            "with_video": self.with_video,
            "share_with_video": share(self.with_video),
            "news": self.news,
            "share_news": share(self.news),
        }


def _count(entries: pd.DataFrame, column: str) -> int:
    return int((entries[column] > 0).sum()) if column in entries.columns else 0


def extension_shares(entries: pd.DataFrame) -> ExtensionShares | None:
    """The extension counts of ``entries``; None when none carries any."""
    news = int(entries["news_publication_date"].count())  # its values (not NaT)
    shares = ExtensionShares(
        len(entries),
        _count(entries, "hreflang_count"),
        _count(entries, "image_count"),
        _count(entries, "video_count"),
        news,
    )
    if not (shares.with_hreflang or shares.with_images or shares.with_video or news):
        return None
    return shares


def _publication_right(dates: pd.Series, fetched_at: float) -> tuple[bool, str]:
    """Whether a file's publication dates are right, and the sentence that says why."""
    seconds = dates.dropna().to_numpy(dtype="datetime64[s]").astype(np.int64)
    n = int(seconds.shape[0])
    if n < MIN_NEWS_ENTRIES:
        return False, ""
    _, counts = np.unique(seconds, return_counts=True)
    top = float(counts.max()) / n
    future = float(np.count_nonzero(seconds > fetched_at + FUTURE_TOLERANCE_SECONDS)) / n
    right = top < PUBLICATION_SHARED_SHARE and future < PUBLICATION_FUTURE_SHARE
    detail = (
        f"{n:,} publication dates, {counts.shape[0]:,} distinct (the most common on "
        f"{top:.0%}), {future:.0%} in the future"
    )
    return right, detail


def publication_date_notes(
    report: DispersionReport, entries: pd.DataFrame, now: datetime | None = None
) -> list[dict[str, object]]:
    """One note per news sitemap whose lastmod says nothing while its publication dates
    are right: ``{"code": "publication-date-right", "segment", "detail"}``."""
    fetched_at = (now or datetime.now(UTC)).timestamp()
    notes: list[dict[str, object]] = []
    for segment in report.segments:
        codes = {f.code for f in segment.flags}
        if segment.group is not None or not codes & _SILENT_LASTMOD:
            continue
        dates = entries.loc[entries["sitemap"] == segment.sitemap, "news_publication_date"]
        right, why = _publication_right(dates, fetched_at)
        if right:
            silent = ", ".join(sorted(codes & _SILENT_LASTMOD))
            notes.append(
                {
                    "code": PUBLICATION_NOTE,
                    "segment": segment.sitemap,
                    "detail": f"lastmod says nothing ({silent}) but news:publication_date is "
                    f"right: {why}; schedule these articles on their publication date",
                }
            )
    return notes

"""The figures of one set of lastmod values: counts, shares, distinctness, entropy, span.

Everything here works on plain numpy arrays (seconds since the epoch), so a
million entries cost a few sorts, not a Python step each.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import numpy as np

__all__ = ["Figures", "LastmodArrays", "ValueCounts", "compute_figures"]

#: Dates before this are implausible for a web page's last change (the web barely
#: existed; 1970-01-01 and 1990-01-01 are what a zero or a bad default prints).
IMPLAUSIBLY_OLD_BEFORE = int(datetime(1995, 1, 1, tzinfo=UTC).timestamp())
#: A lastmod later than the fetch time by more than this is in the future. Wide enough for
#: clock skew between the site and us, narrow enough to catch local time written as UTC.
FUTURE_TOLERANCE_SECONDS = 15 * 60
_DAY = 86_400


@dataclass(frozen=True)
class LastmodArrays:
    """The columns one analysis needs, as numpy arrays of equal length.

    ``seconds`` holds the lastmod as whole seconds since the epoch (meaningless
    where ``dated`` is False); ``date_only`` is True for year, month and day
    precision; ``invalid`` marks a lastmod that was written but could not be read.
    """

    seconds: np.ndarray  # int64
    dated: np.ndarray  # bool
    date_only: np.ndarray  # bool
    invalid: np.ndarray  # bool
    news: np.ndarray  # bool: the entry carries news:publication_date

    def __len__(self) -> int:
        return int(self.seconds.shape[0])

    def take(self, selection: slice | np.ndarray) -> LastmodArrays:
        """The same columns for a slice or a boolean mask."""
        return LastmodArrays(
            self.seconds[selection],
            self.dated[selection],
            self.date_only[selection],
            self.invalid[selection],
            self.news[selection],
        )


@dataclass(frozen=True)
class Figures:
    """What the lastmod values of a site or a sub-sitemap look like.

    Shares of values (``top_share``, ``top3_share``, ``date_only_share``,
    ``future_share``) are over the dated entries; ``share_with_lastmod`` and
    ``invalid_share`` are over all URLs. ``entropy`` is the Shannon entropy of the
    values at second resolution divided by its maximum, log(dated): 1.0 when every
    value is distinct, 0.0 when all are one value; None with fewer than 2 values.
    """

    urls: int
    with_lastmod: int
    share_with_lastmod: float
    invalid: int
    invalid_share: float
    distinct_seconds: int
    distinct_days: int
    top_value: datetime | None
    top_count: int
    top_share: float
    top3_share: float
    entropy: float | None
    oldest: datetime | None
    newest: datetime | None
    date_only: int
    with_time: int
    date_only_share: float
    future: int
    future_share: float
    implausibly_old: int
    news: int

    def to_dict(self) -> dict[str, object]:
        """JSON-ready figures (datetimes as ISO 8601 UTC, shares rounded to 4 places)."""
        out: dict[str, object] = {}
        for key, value in asdict(self).items():
            if isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, float):
                value = round(value, 4)
            out[key] = value
        return out


@dataclass(frozen=True)
class ValueCounts:
    """Distinct values and how often each occurs, most common first."""

    values: np.ndarray  # int64 seconds
    counts: np.ndarray  # int64


def value_counts(seconds: np.ndarray) -> ValueCounts:
    """The distinct values of ``seconds`` with their counts, most common first."""
    values, counts = np.unique(seconds, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    return ValueCounts(values[order], counts[order])


def compute_figures(arrays: LastmodArrays, fetched_at: np.ndarray | float) -> Figures:
    """The figures of ``arrays``; ``fetched_at`` (seconds) per entry or for all."""
    urls = len(arrays)
    dated = arrays.dated
    seconds = arrays.seconds[dated]
    n = int(seconds.shape[0])
    invalid = int(np.count_nonzero(arrays.invalid))
    date_only = int(np.count_nonzero(arrays.date_only[dated]))
    fetched = fetched_at[dated] if isinstance(fetched_at, np.ndarray) else fetched_at
    future = int(np.count_nonzero(seconds > fetched + FUTURE_TOLERANCE_SECONDS))
    groups = value_counts(seconds)
    top_count = int(groups.counts[0]) if n else 0
    return Figures(
        urls=urls,
        with_lastmod=n,
        share_with_lastmod=_share(n, urls),
        invalid=invalid,
        invalid_share=_share(invalid, urls),
        distinct_seconds=int(groups.values.shape[0]),
        distinct_days=int(np.unique(seconds // _DAY).shape[0]) if n else 0,
        top_value=_utc(groups.values[0]) if n else None,
        top_count=top_count,
        top_share=_share(top_count, n),
        top3_share=_share(int(groups.counts[:3].sum()), n),
        entropy=normalised_entropy(groups.counts, n),
        oldest=_utc(seconds.min()) if n else None,
        newest=_utc(seconds.max()) if n else None,
        date_only=date_only,
        with_time=n - date_only,
        date_only_share=_share(date_only, n),
        future=future,
        future_share=_share(future, n),
        implausibly_old=int(np.count_nonzero(seconds < IMPLAUSIBLY_OLD_BEFORE)),
        news=int(np.count_nonzero(arrays.news)),
    )


def normalised_entropy(counts: np.ndarray, total: int) -> float | None:
    """Shannon entropy of a distribution given by ``counts``, over its maximum log(total)."""
    if total < 2:
        return None
    # H / log N = 1 - sum(c log c) / (N log N): exact where every count is 1 (no rounding
    # of p = 1/N), so a distribution of distinct values reads exactly 1
    c = np.asarray(counts, dtype=float)
    entropy = 1.0 - float((c * np.log(c)).sum()) / (total * float(np.log(total)))
    return min(1.0, max(0.0, entropy))


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _utc(seconds: np.integer | int) -> datetime:
    return datetime.fromtimestamp(int(seconds), UTC)

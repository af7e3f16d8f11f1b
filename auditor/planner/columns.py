"""A site's inventory columns as the plan reads them, without a Python object a row
where none is needed: its listing (:class:`Listed`: locs, sub-sitemaps, lastmods), read
from the stored blob without a DataFrame or from a walk's entries, texts from
categoricals by their categories, lastmods as days since the epoch with the aware
datetimes made only for the pages a plan names (:class:`Instants`), and the per-segment
sums of the crawl log's figures.

A plan of 100,000 sites reads some 45 million inventory rows; a Python datetime made
for each (``entry_rows``), the DataFrame of each inventory and a boolean mask per
segment were most of its time.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd

    from auditor.history.state import StateColumns

__all__ = ["Instants", "Listed", "instants", "segment_sums", "texts"]

Floats = npt.NDArray[np.float64]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: The int64 of NaT: a missing instant.
_NAT = np.iinfo(np.int64).min
_MICROS_A_DAY = 86_400e6


def texts(column: pd.Series[Any]) -> list[str]:
    """The column's values as Python strings (a categorical's by its categories, once
    each, not by iterating the categorical)."""
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        names = np.array([str(c) for c in column.cat.categories] + ["nan"], dtype=object)
        found: list[str] = names[codes].tolist()  # code -1 (missing) reads "nan", as str()
        return found
    return [str(value) for value in column]


class Instants(Sequence["datetime | None"]):
    """Aware UTC datetimes (None where missing) made on demand from int64 microseconds
    since the epoch: indexing makes one; nothing is made for the rows never read."""

    def __init__(self, micros: npt.NDArray[np.int64]) -> None:
        self._micros = micros
        self._values: list[int] | None = None  # the micros as Python ints, once read

    def __len__(self) -> int:
        return len(self._micros)

    def taken(self, rows: npt.NDArray[Any]) -> Instants:
        """The instants of ``rows`` (indices or a mask)."""
        return Instants(self._micros[rows])

    @overload
    def __getitem__(self, i: int) -> datetime | None: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[datetime | None]: ...

    def __getitem__(self, i: int | slice) -> datetime | Sequence[datetime | None] | None:
        if isinstance(i, slice):
            return Instants(self._micros[i])
        if self._values is None:
            self._values = self._micros.tolist()
        value = self._values[i]
        return None if value == _NAT else _EPOCH + timedelta(microseconds=value)


@dataclass(frozen=True)
class Listed:
    """A site's listed URLs as a plan reads them: each one's loc, sub-sitemap and
    lastmod (days since the epoch, NaN for none; and as datetimes, made when read)."""

    locs: list[str]
    sitemaps: list[str]
    days: Floats
    lastmods: Sequence[datetime | None]

    @classmethod
    def of_frame(cls, entries: pd.DataFrame) -> Listed:
        """The listing of an inventory's entries (a walk's, or a stored one decoded)."""
        days, lastmods = instants(entries["lastmod"])
        return cls(texts(entries["loc"]), texts(entries["sitemap"]), days, lastmods)

    @classmethod
    def of_state(cls, state: StateColumns) -> Listed:
        """The listing of a stored inventory, read from its blob without a DataFrame
        (:func:`~auditor.history.state.state_columns`): the same as :meth:`of_frame`
        of the blob decoded."""
        names = np.array([*state.sitemaps, "nan"], dtype=object)  # -1 (none) reads "nan"
        sitemaps: list[str] = names[state.sitemap_codes].tolist()
        micros = np.asarray(state.lastmod, dtype=np.int64)
        return cls(list(state.locs), sitemaps, _days(micros), Instants(micros))

    def __len__(self) -> int:
        return len(self.locs)

    def kept(self, allowed: Sequence[bool]) -> Listed:
        """The listing of the rows ``allowed``, in order."""
        mask = np.asarray(allowed, dtype=bool)
        lastmods = (
            self.lastmods.taken(mask)
            if isinstance(self.lastmods, Instants)
            else [d for d, keep in zip(self.lastmods, allowed, strict=True) if keep]
        )
        locs = [loc for loc, keep in zip(self.locs, allowed, strict=True) if keep]
        sitemaps = [s for s, keep in zip(self.sitemaps, allowed, strict=True) if keep]
        return Listed(locs, sitemaps, self.days[mask], lastmods)


def _days(micros: npt.NDArray[np.int64]) -> Floats:
    """Days since the epoch of int64 microseconds (NaN for NaT's int64)."""
    days: Floats = micros.astype(float) / _MICROS_A_DAY
    days[micros == _NAT] = np.nan
    return days


def instants(column: pd.Series[Any]) -> tuple[Floats, Sequence[datetime | None]]:
    """A lastmod column as days since the epoch (NaN where missing) and as aware UTC
    datetimes (:class:`Instants` for a ``datetime.UTC`` column; else each value converted)."""
    values = column.to_numpy(dtype="datetime64[us]", na_value=np.datetime64("NaT"))
    micros = values.astype("int64")
    days = _days(micros)
    if getattr(column.dtype, "tz", None) is UTC:
        return days, Instants(micros)
    lastmods = column.astype(object).where(column.notna(), None)  # as entry_rows reads
    return days, [None if value is None else value.to_pydatetime() for value in lastmods]


def segment_sums(segment: npt.NDArray[np.intp], segments: int, *columns: Floats) -> list[Floats]:
    """Each column summed over each segment's rows (``segment``: each row's code, below
    ``segments``): the same sums, to the last bit, as ``column[segment == code].sum()``,
    each segment's rows taken in their order, without a mask per segment."""
    order = np.argsort(segment, kind="stable")
    bounds = np.searchsorted(segment[order], np.arange(segments + 1)).tolist()
    found = []
    for column in columns:
        ordered = column[order]
        found.append(np.array([ordered[a:b].sum() for a, b in pairwise(bounds)]))
    return found

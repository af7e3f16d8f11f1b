"""A site's inventory columns as the plan reads them, without a Python object a row
where none is needed: texts from categoricals by their categories, lastmods as days
since the epoch with the aware datetimes made only for the pages a plan names, and
the per-segment sums of the crawl log's figures.

A plan of 100,000 sites reads some 45 million inventory rows; a Python datetime made
for each (``entry_rows``) and a boolean mask per segment were most of its time.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Instants", "instants", "segment_sums", "texts"]

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


def instants(column: pd.Series[Any]) -> tuple[Floats, Sequence[datetime | None]]:
    """A lastmod column as days since the epoch (NaN where missing) and as aware UTC
    datetimes (:class:`Instants` for a ``datetime.UTC`` column; else each value converted)."""
    values = column.to_numpy(dtype="datetime64[us]", na_value=np.datetime64("NaT"))
    micros = values.astype("int64")
    days = micros.astype(float) / _MICROS_A_DAY
    missing = np.isnat(values)
    days[missing] = np.nan
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

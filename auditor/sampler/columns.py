"""An inventory frame's columns as the sampler reads them, without pandas boxing each
value (issue 36: on a small site's 60 URLs, each value read through ``iat``, a column's
``astype(str)`` and a frame's ``reset_index`` were most of choosing a sample): a
categorical's codes and categories, an object column's own array.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["column_reader", "column_texts", "instant_reader", "positional"]


def positional(entries: pd.DataFrame) -> pd.DataFrame:
    """``entries`` indexed by row position (as ``reset_index(drop=True)``; the frame
    itself when it is already: an inventory's is)."""
    import pandas as pd

    index = entries.index
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return entries
    return entries.reset_index(drop=True)


def column_reader(column: pd.Series) -> Callable[[int], Any]:
    """Row ``row``'s value of ``column`` as ``column.iat[row]`` reads it: a categorical's
    from its codes and its categories (NaN where missing), an object column's from its
    array, any other through ``iat``."""
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):
        categorical = column.array
        codes = categorical.codes
        names = [*categorical.categories, np.nan]  # code -1 (missing) reads the last
        return lambda row: names[codes[row]]
    if column.dtype == object:
        return column.to_numpy().__getitem__
    return column.iat.__getitem__


def column_texts(column: pd.Series) -> np.ndarray:
    """``column.astype(str).to_numpy()``: a categorical of texts as its names taken by
    code, an object column of texts as it is, any other through ``astype``."""
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):  # each name once
        categorical = column.array
        codes, names = categorical.codes, categorical.categories
        if len(codes) and codes.min() >= 0 and all(type(name) is str for name in names):
            texts: np.ndarray = np.array(list(names), dtype=object)[codes]
            return texts
    elif column.dtype == object:
        values = column.to_numpy()
        if all(type(value) is str for value in values):
            return values
    return column.astype(str).to_numpy()


def instant_reader(column: pd.Series) -> Callable[[int], datetime | None]:
    """Row ``row``'s instant of ``column`` as an aware datetime (None where missing; a
    naive one read as UTC), as ``column.iat[row].to_pydatetime()`` makes it: a column of
    UTC instants (the inventory's) from its microseconds since the epoch."""
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.DatetimeTZDtype) and dtype.tz is UTC and dtype.unit in _LOSSLESS:
        micros = column.array.as_unit("us").asi8
        return lambda row: None if micros[row] == _NAT else _EPOCH + _MICROSECOND * int(micros[row])
    return lambda row: _aware(column.iat[row])


def _aware(value: Any) -> datetime | None:
    if value is None or value != value:  # NaT, NaN
        return None
    moment: datetime = value.to_pydatetime()
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


_LOSSLESS = frozenset({"s", "ms", "us"})  # units whose instants are whole microseconds
_NAT = np.iinfo(np.int64).min
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

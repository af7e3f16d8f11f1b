"""The inventory frame as main built it before issue 36's item 3a (commit 12117a6),
frozen: :func:`auditor.walker.inventory.entries_to_dataframe` must make the same frame
(columns, dtypes, categories, index, values) for any entries.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

import pandas as pd

from auditor.models import Extensions, SitemapEntry
from auditor.walker.inventory import EXTENSION_COLUMNS


def reference_frame(entries: Iterable[SitemapEntry]) -> pd.DataFrame:
    """A DataFrame with one row per entry.

    ``lastmod`` and ``news_publication_date`` are UTC ``datetime64`` columns (NaT when
    absent); ``sitemap`` and ``lastmod_precision`` are categoricals, which keeps a
    million-row inventory small. When any entry carries sitemap extensions, the
    :data:`EXTENSION_COLUMNS` follow.
    """
    columns: list[list[Any]] = [[] for _ in SitemapEntry._fields]
    appenders = [column.append for column in columns]
    for entry in entries:
        for append, value in zip(appenders, entry, strict=True):
            append(value)
    extensions = columns.pop()
    loc, lastmod, precision, raw, sitemap, news = columns
    frame = pd.DataFrame(
        {
            "loc": _column(loc).astype(object),
            "lastmod": _instants(lastmod),
            "lastmod_precision": _categories(precision),
            "lastmod_raw": _column(raw).astype(object),
            "sitemap": _categories(sitemap),
            "news_publication_date": _instants(news),
        },
        copy=False,
    )
    if any(ext is not None for ext in extensions):
        _add_extensions(frame, cast("list[Extensions | None]", extensions))
    return frame


def _column(values: list[Any]) -> pd.Series:
    """``values`` as a frame of lists holds them (pandas infers the dtype; an empty list is
    float64 in a frame, object in a Series alone)."""
    return pd.Series(values, dtype=None if values else "float64")


def _instants(values: list[datetime | None]) -> pd.Series:
    """UTC ``datetime64`` (NaT for None); a column of None, most sites' news dates, made
    as ``to_datetime`` makes it (seconds, UTC) without its parsing."""
    import numpy as np

    if values and all(value is None for value in values):
        nat = np.full(len(values), np.datetime64("NaT", "s"))
        return pd.Series(nat, dtype="datetime64[s, UTC]")
    return pd.to_datetime(_column(values), utc=True)


def _categories(values: list[str | None]) -> pd.Series:
    """A categorical of texts (None missing) from its codes, categories sorted as
    ``astype("category")`` sorts them (by code point); other values go through it."""
    found = set(values)
    found.discard(None)
    if not found or not all(type(value) is str for value in found):
        return _column(values).astype("category")
    ordered = sorted(cast("set[str]", found))
    codes: dict[str | None, int] = {name: code for code, name in enumerate(ordered)}
    codes[None] = -1
    dtype = pd.CategoricalDtype(pd.Index(ordered))  # the dtype a column of texts infers
    return pd.Series(pd.Categorical.from_codes([codes[v] for v in values], dtype=dtype))


def _add_extensions(frame: pd.DataFrame, extensions: list[Extensions | None]) -> None:
    """The :data:`EXTENSION_COLUMNS` of ``frame``, from each entry's extensions."""
    none = Extensions()
    present = [none if ext is None else ext for ext in extensions]
    langs = [",".join(sorted({lang for lang, _ in e.hreflang})) or None for e in present]
    values: dict[str, Any] = {
        "hreflang_count": pd.array([e.hreflang_count for e in present], dtype="int32"),
        "hreflang_langs": pd.Series(langs, dtype="category"),
        "image_count": pd.array([e.image_count for e in present], dtype="int32"),
        "first_image": pd.Series([e.first_image for e in present], dtype=object),
        "video_count": pd.array([e.video_count for e in present], dtype="int32"),
        "news_title": pd.Series([e.news_title for e in present], dtype=object),
        "news_language": pd.Series([e.news_language for e in present], dtype="category"),
    }
    for name in EXTENSION_COLUMNS:
        frame[name] = values[name]

"""Inventories as pandas DataFrames, for notebooks and the analysis stages.

Touches: the network, the disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from auditor.errors import UsageError
from auditor.models import Extensions, Problem, SitemapEntry, SitemapFile
from auditor.walker import ProgressCallback, Walk, WalkOptions
from auditor.walker.discovery import Target
from auditor.walker.reuse import SitemapStore
from auditor.walker.robotsfile import RobotsFile

if TYPE_CHECKING:
    import pandas as pd

    from auditor.http import HttpClient

__all__ = [
    "ENTRY_COLUMNS",
    "EXTENSION_COLUMNS",
    "Inventory",
    "entries_to_dataframe",
    "entry_rows",
    "load_inventory",
    "read_entries_file",
]

#: An inventory's columns: the entry's fields but its extensions.
ENTRY_COLUMNS = SitemapEntry._fields[:-1]
#: The columns an inventory has when an entry carries sitemap extensions (none otherwise):
#: counts, the first image, the news title and language, and the hreflang languages as
#: one text (``"de,en,fr"``, sorted; a categorical: a site's URLs share a few sets). The
#: alternates' hrefs are not kept: millions of URLs times their languages would dwarf the
#: rest, and they are the site's other-language URLs, listed in its sitemaps themselves.
EXTENSION_COLUMNS = (
    "hreflang_count",
    "hreflang_langs",
    "image_count",
    "first_image",
    "video_count",
    "news_title",
    "news_language",
)


@dataclass(frozen=True)
class Inventory:
    """Everything one walk found: the entries as a DataFrame, the files and the problems,
    and the site's robots.txt response when the walk started from it."""

    target: str
    entries: pd.DataFrame
    files: tuple[SitemapFile, ...]
    problems: tuple[Problem, ...]
    robots: RobotsFile | None = None

    @property
    def readable(self) -> bool:
        """True when at least one sitemap file was read."""
        return any(f.readable for f in self.files)

    def summary(self) -> dict[str, int]:
        """The ``inventory`` object of the JSON contracts."""
        return {
            "sitemaps": sum(f.readable for f in self.files),
            "unreadable": sum(not f.readable for f in self.files),
            "urls": len(self.entries),
            "with_lastmod": int(self.entries["lastmod"].notna().sum()),
            "problems": len(self.problems),
        }


def entries_to_dataframe(entries: Iterable[SitemapEntry]) -> pd.DataFrame:
    """A DataFrame with one row per entry.

    ``lastmod`` and ``news_publication_date`` are UTC ``datetime64`` columns (NaT when
    absent); ``sitemap`` and ``lastmod_precision`` are categoricals, which keeps a
    million-row inventory small. When any entry carries sitemap extensions, the
    :data:`EXTENSION_COLUMNS` follow.
    """
    import pandas as pd

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
    import pandas as pd

    return pd.Series(values, dtype=None if values else "float64")


def _instants(values: list[datetime | None]) -> pd.Series:
    """UTC ``datetime64`` (NaT for None); a column of None, most sites' news dates, made
    as ``to_datetime`` makes it (seconds, UTC) without its parsing."""
    import numpy as np
    import pandas as pd

    if values and all(value is None for value in values):
        nat = np.full(len(values), np.datetime64("NaT", "s"))
        return pd.Series(nat, dtype="datetime64[s, UTC]")
    return pd.to_datetime(_column(values), utc=True)


def _categories(values: list[str | None]) -> pd.Series:
    """A categorical of texts (None missing) from its codes, categories sorted as
    ``astype("category")`` sorts them (by code point); other values go through it."""
    import pandas as pd

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
    import pandas as pd

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


def entry_rows(
    entries: pd.DataFrame,
) -> Iterator[tuple[str, str, datetime | None, str | None]]:
    """Each entry's loc, sub-sitemap, lastmod (an aware datetime, None where undated) and
    its precision (None where undated), as plain Python values."""
    lastmods = entries["lastmod"].astype(object).where(entries["lastmod"].notna(), None)
    for loc, sitemap, lastmod, precision in zip(
        entries["loc"], entries["sitemap"], lastmods, entries["lastmod_precision"], strict=True
    ):
        yield (
            str(loc),
            str(sitemap),
            None if lastmod is None else lastmod.to_pydatetime(),
            precision if isinstance(precision, str) else None,
        )


def load_inventory(
    target: str | Target,
    options: WalkOptions | None = None,
    *,
    on_progress: ProgressCallback | None = None,
    client: HttpClient | None = None,
    previous: SitemapStore | None = None,
) -> Inventory:
    """Walk ``target`` and gather everything into an :class:`Inventory` (with ``client``
    when given, else a client of the walk's own); with ``previous``, the files it holds
    are requested conditionally (:mod:`auditor.walker.reuse`)."""
    walk = Walk(target, options, on_progress=on_progress, client=client, previous=previous)
    frame = entries_to_dataframe(walk)
    name = target.value if isinstance(target, Target) else target
    return Inventory(name, frame, tuple(walk.files), tuple(walk.problems), walk.robots)


def read_entries_file(path: str | Path) -> pd.DataFrame:
    """Entries written earlier by ``auditor walk`` (JSONL or CSV) as a DataFrame.

    Only ``loc`` and ``lastmod`` are needed (to compare two walks); the other
    columns are kept when present.
    """
    import pandas as pd

    path = Path(path)
    try:
        if path.suffix.lower() == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        else:
            frame = pd.read_json(path, lines=True, dtype=False)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read entries from {path}: {exc}") from exc
    if "loc" not in frame.columns or "lastmod" not in frame.columns:
        raise UsageError(f"{path} has no loc and lastmod columns: not an `auditor walk` output")
    frame["lastmod"] = pd.to_datetime(frame["lastmod"], utc=True, errors="coerce", format="ISO8601")
    return frame

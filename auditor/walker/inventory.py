"""Inventories as pandas DataFrames, for notebooks and the analysis stages.

Touches: the network, the disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from auditor.errors import UsageError
from auditor.models import Extensions, Problem, SitemapEntry, SitemapFile
from auditor.walker import ProgressCallback, Walk, WalkOptions
from auditor.walker.discovery import Target
from auditor.walker.reuse import SitemapStore
from auditor.walker.robotsfile import RobotsFile

if TYPE_CHECKING:
    import numpy as np
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
            "with_lastmod": int(self.entries["lastmod"].count()),  # its values (not NaT)
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
    data: dict[str, Any] = {
        "loc": _texts(loc),
        "lastmod": _instants(lastmod),
        "lastmod_precision": _categories(precision),
        "lastmod_raw": _texts(raw),
        "sitemap": _categories(sitemap),
        "news_publication_date": _instants(news),
    }
    if any(ext is not None for ext in extensions):
        data.update(_extension_columns(cast("list[Extensions | None]", extensions)))
    return pd.DataFrame(data, copy=False)  # one constructor of finished arrays


def _column(values: list[Any]) -> pd.Series:
    """``values`` as a frame of lists holds them (pandas infers the dtype; an empty list is
    float64 in a frame, object in a Series alone)."""
    import pandas as pd

    return pd.Series(values, dtype=None if values else "float64")


def _objects(values: list[Any]) -> pd.Series:
    """``values`` as they are in an object column (a frame would infer a string dtype
    from an array alone)."""
    import numpy as np
    import pandas as pd

    array = np.empty(len(values), dtype=object)
    array[:] = values
    return pd.Series(array, dtype=object, copy=False)


def _texts(values: list[str | None]) -> Any:
    """An object column of texts (None missing) as ``_column(values).astype(object)``
    makes it, without the Series: a missing text is what that makes of None (None, or
    NaN where pandas infers its string dtype). Other values go through it."""
    if not values or not all(type(v) is str or v is None for v in values):
        return _column(values).astype(object)
    texts = [v for v in values if v is not None]
    if not texts:
        return _objects(values)  # a column of None stays object, None
    try:  # what pandas' string dtype refuses (a lone surrogate), it refuses as it did;
        for text in texts:  # each text alone: a large site's locs are never joined
            if not text.isascii():
                text.encode()
    except UnicodeEncodeError:
        return _column(values).astype(object)
    if len(texts) == len(values):
        return _objects(values)
    missing = _inferred().missing_text
    return _objects([missing if v is None else v for v in values])


def _instants(values: list[datetime | None]) -> Any:
    """UTC ``datetime64`` (NaT for None) as ``to_datetime(utc=True)`` makes it from aware
    datetimes, from their offsets to the epoch; a column of None, most sites' news dates,
    made as ``to_datetime`` makes it (seconds, UTC) without its parsing. Other values
    (naive or pandas' own instants, texts) go through ``to_datetime``."""
    import numpy as np
    import pandas as pd

    if values and all(value is None for value in values):
        return _utc(np.full(len(values), np.datetime64("NaT", "s")))
    inferred = _inferred()
    if values and inferred.per_microsecond:
        try:
            ticks = [
                _NAT if v is None else (v - _EPOCH) // _MICROSECOND * inferred.per_microsecond
                for v in values
                if v is None or (type(v) is datetime and v.tzinfo is not None)
            ]
            if len(ticks) == len(values):
                instants = np.array(ticks, dtype=np.int64).view(inferred.naive)
                return _utc(instants)
        except (TypeError, OverflowError):  # an offset pandas would read otherwise
            pass
    return pd.to_datetime(_column(values), utc=True)


def _utc(naive: np.ndarray) -> pd.arrays.DatetimeArray:
    """Naive ``datetime64`` values as UTC instants (``tz_localize``, without a Series)."""
    import pandas as pd

    return cast("pd.arrays.DatetimeArray", pd.array(naive)).tz_localize("UTC")


def _categories(values: list[str | None], fallback: Callable[[], pd.Series] | None = None) -> Any:
    """A categorical of texts (None missing) from its codes, categories sorted as
    ``astype("category")`` sorts them (by code point); other values go through
    ``fallback`` (default: ``astype("category")``)."""
    import pandas as pd

    found = set(values)
    found.discard(None)
    if not found or not all(type(value) is str for value in found):
        return fallback() if fallback else _column(values).astype("category")
    ordered = sorted(cast("set[str]", found))
    codes: dict[str | None, int] = {name: code for code, name in enumerate(ordered)}
    codes[None] = -1
    dtype = _text_categories(tuple(ordered))
    return pd.Categorical.from_codes([codes[v] for v in values], dtype=dtype)


@lru_cache(maxsize=64)
def _text_categories(ordered: tuple[str, ...]) -> pd.CategoricalDtype:
    """The dtype a column of the texts ``ordered`` infers, made once: checking that its
    categories are unique is most of a small categorical's cost, and a site's precisions
    (or a site audited again) ask for the same one."""
    import pandas as pd

    return pd.CategoricalDtype(pd.Index(list(ordered)))


def _extension_columns(extensions: list[Extensions | None]) -> dict[str, Any]:
    """The :data:`EXTENSION_COLUMNS`, from each entry's extensions (None: it has none)."""
    import numpy as np
    import pandas as pd

    none = Extensions()
    present = [none if ext is None else ext for ext in extensions]
    langs = [",".join(sorted({lang for lang, _ in e.hreflang})) or None for e in present]
    languages = [e.news_language for e in present]
    values: dict[str, Any] = {
        "hreflang_count": np.array([e.hreflang_count for e in present], dtype=np.int32),
        "hreflang_langs": _categories(langs, lambda: pd.Series(langs, dtype="category")),
        "image_count": np.array([e.image_count for e in present], dtype=np.int32),
        "first_image": _objects([e.first_image for e in present]),
        "video_count": np.array([e.video_count for e in present], dtype=np.int32),
        "news_title": _objects([e.news_title for e in present]),
        "news_language": _categories(languages, lambda: pd.Series(languages, dtype="category")),
    }
    return {name: values[name] for name in EXTENSION_COLUMNS}


@dataclass(frozen=True)
class _Inference:
    """What this pandas makes of texts and instants, asked once: the missing text of an
    object column of texts, and the unit ``to_datetime`` gives aware datetimes."""

    missing_text: Any
    naive: str  # the unit's naive numpy dtype, "datetime64[us]"
    per_microsecond: int  # its ticks a microsecond; 0: coarser, left to to_datetime


@cache
def _inferred() -> _Inference:
    """This pandas' :class:`_Inference`."""
    import numpy as np
    import pandas as pd

    missing = pd.Series(["a", None]).astype(object).iloc[1]
    dtype = pd.to_datetime(pd.Series([_EPOCH, None]), utc=True).dtype
    unit = cast("pd.DatetimeTZDtype", dtype).unit
    ticks = {"us": 1, "ns": 1000}.get(unit, 0)
    return _Inference(missing, str(np.dtype(f"datetime64[{unit}]")), ticks)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NAT = -(2**63)  # numpy's NaT as an int64


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

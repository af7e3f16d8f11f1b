"""Inventories as pandas DataFrames, for notebooks and the analysis stages."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.errors import UsageError
from auditor.models import Problem, SitemapEntry, SitemapFile
from auditor.walker import ProgressCallback, Walk, WalkOptions
from auditor.walker.discovery import Target
from auditor.walker.reuse import SitemapStore
from auditor.walker.robotsfile import RobotsFile

if TYPE_CHECKING:
    import pandas as pd

    from auditor.http import HttpClient

__all__ = [
    "ENTRY_COLUMNS",
    "Inventory",
    "entries_to_dataframe",
    "entry_rows",
    "load_inventory",
    "read_entries_file",
]

ENTRY_COLUMNS = SitemapEntry._fields


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
    million-row inventory small.
    """
    import pandas as pd

    columns: list[list[object]] = [[] for _ in ENTRY_COLUMNS]
    appenders = [column.append for column in columns]
    for entry in entries:
        for append, value in zip(appenders, entry, strict=True):
            append(value)
    frame = pd.DataFrame(dict(zip(ENTRY_COLUMNS, columns, strict=True)))
    for name in ("lastmod", "news_publication_date"):
        frame[name] = pd.to_datetime(frame[name], utc=True)
    for name in ("sitemap", "lastmod_precision"):
        frame[name] = frame[name].astype("category")
    frame["loc"] = frame["loc"].astype(object)
    frame["lastmod_raw"] = frame["lastmod_raw"].astype(object)
    return frame


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

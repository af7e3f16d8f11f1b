"""A real site's daily snapshots, read as a replay: which copy of each page the site
serves at an instant, when its main text changed, what its sitemap lastmod said.

The folder is what ``/work/data/daily/prepare_caltech_libguides.py`` writes (never
copied into the repository: the content has no licence): ``DIR/<YYYY-MM-DD>/pages/*.html``
(a page's main region only, keyed by the ``p-NNN`` of its file name), ``urls.tsv`` (its
loc and the CMS's ``updated``, the derived sitemap's lastmod) and ``DIR/commits.tsv``
(day -> commit time).

Day ``d`` of the window starts at ``d * DAY`` seconds after midnight UTC of the first
day; its snapshot takes effect at its commit time (the instant the scrape recorded it),
or at 08:40 UTC of the day when the day carries an earlier commit (its files are then
the earlier day's, so nothing switches). Before the first snapshot the first day's copy
is served. A file that is not HTML (Playwright's timeout text, an empty file) is not an
observation: the page's last good copy stays served, and its next good copy is compared
with that one. "Changed" is the measure of ``/work/data/daily/measure_daily.py``:
``main`` (trafilatura's main text, when it imports) or ``text`` (lxml's visible text).

Touches: the disk (reads the data folder).
"""

from __future__ import annotations

import csv
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lxml.html
import numpy as np

from ..planbench.world import DAY

__all__ = [
    "DEFAULT_SNAPSHOT_TIME",
    "MEASURES",
    "ReplayPage",
    "Window",
    "change_days",
    "extractor",
    "load_window",
    "served_days",
    "snapshot_at",
]

#: The scrape commits at 08:40-08:47 UTC: a day without a commit of its own switches here.
DEFAULT_SNAPSHOT_TIME = timedelta(hours=8, minutes=40)
MEASURES = ("main", "text")
_PAGE_RE = re.compile(r"-p-(\d+)\.html$")
_DROP_TAGS = ("script", "style", "noscript", "nav", "header", "footer")


def snapshot_at(instants: Sequence[int], s: int) -> int:
    """The index of the snapshot in force at ``s``: the last taking effect at or before
    it (the first before any)."""
    return max(bisect_right(instants, s) - 1, 0)


def change_days(texts: Sequence[str | None]) -> list[int]:
    """The days whose text differs from the last good text before (None: not observed)."""
    days, last = [], None
    for day, text in enumerate(texts):
        if text is None:
            continue
        if last is not None and text != last:
            days.append(day)
        last = text
    return days


def served_days(texts: Sequence[str | None]) -> list[int]:
    """For each day, the day whose copy is served: the last good one at or before it
    (the first good one before any)."""
    good = [day for day, text in enumerate(texts) if text is not None]
    if not good:
        raise ValueError("a page with no good copy")
    served, last = [], good[0]
    for day, text in enumerate(texts):
        if text is not None:
            last = day
        served.append(last)
    return served


def lxml_text(raw: bytes) -> str:
    """Visible text of an HTML fragment, as measure_daily.py reads it."""
    root = lxml.html.fromstring(raw)
    for el in list(root.iter(*_DROP_TAGS)):
        if el.getparent() is not None:
            el.drop_tree()
    return " ".join(root.text_content().split())


def extractor(measure: str) -> tuple[Callable[[bytes], str], str]:
    """The text a change is read on, and its name (``main`` without trafilatura: None)."""
    if measure == "text":
        return lxml_text, "lxml visible text (script/style/noscript/nav/header/footer dropped)"
    try:
        import trafilatura  # type: ignore[import-not-found]
    except ImportError as missing:
        raise LookupError("trafilatura does not import") from missing

    def main_text(raw: bytes) -> str:
        html = raw.decode("utf-8", "replace")
        if "<body" not in html:
            html = f"<html><body>{html}</body></html>"
        out = trafilatura.extract(
            html, include_comments=False, include_tables=True, deduplicate=False
        )
        return " ".join((out or "").split())

    return main_text, f"trafilatura {trafilatura.__version__} main text (tables kept)"


@dataclass
class ReplayPage:
    """One page of the replay: its path, title, copies and change instants."""

    page_id: str
    path: str  # path and query of its loc
    title: str
    index: int
    files: list[Path]  # per day of the window, the copy served from that day's snapshot
    lastmods: list[int | None]  # per day, the lastmod instant its sitemap entry names
    instants: list[int]  # the window's snapshot instants (shared)
    events: np.ndarray  # main-text change instants, sorted
    rate: float = 0.0  # changes per day over the window (the oracle's)
    created: int = 0

    def version_at(self, s: int) -> int:
        """The content version at ``s``: the changes at or before it."""
        return int(np.searchsorted(self.events, s, side="right"))

    def body_at(self, s: int) -> str:
        """The copy the site serves at ``s`` (its main region), as text."""
        return self.files[snapshot_at(self.instants, s)].read_text("utf-8", "replace")

    def lastmod_at(self, s: int) -> int | None:
        """The instant the sitemap's lastmod names at ``s``."""
        return self.lastmods[snapshot_at(self.instants, s)]


@dataclass
class Window:
    """The replayed days: their names, snapshot instants, midnight of day 0, the pages."""

    days: list[str]
    instants: list[int]
    t0: datetime
    pages: list[ReplayPage]
    measure: str  # how "changed" was read
    dropped: int  # pages seen but not present on every day


def _read_tsv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _instants(base: Path, days: list[str], t0: datetime) -> list[int]:
    commits = {r["day"]: r["committed"] for r in _read_tsv(base / "commits.tsv")}
    out = []
    for n, day in enumerate(days):
        moment = datetime.fromisoformat(commits[day]) if day in commits else None
        if moment is None or moment.date().isoformat() != day:
            moment = t0 + timedelta(days=n) + DEFAULT_SNAPSHOT_TIME
        out.append(int((moment - t0).total_seconds()))
    return out


def _utc_instant(text: str, t0: datetime) -> int | None:
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace(" ", "T")).replace(tzinfo=UTC)
    return int((moment - t0).total_seconds())


class _Texts:
    """Each file's text (None: not HTML), computed once per file (files are hard links)."""

    def __init__(self, read: Callable[[bytes], str]) -> None:
        self.read = read
        self.cache: dict[tuple[int, int], str | None] = {}

    def get(self, path: Path) -> str | None:
        st = os.stat(path)
        key = (st.st_dev, st.st_ino)
        if key not in self.cache:
            raw = path.read_bytes()
            self.cache[key] = self.read(raw) if raw.lstrip().startswith(b"<") else None
        return self.cache[key]


def load_window(base: Path, days: int | None = None, measure: str = "main") -> Window:
    """The first ``days`` days of ``base`` (None: all), with the pages present on every
    one of them, "changed" read by ``measure`` (:data:`MEASURES`)."""
    names = sorted(p.name for p in base.iterdir() if re.fullmatch(r"\d{4}-\d\d-\d\d", p.name))
    names = names[:days] if days else names
    t0 = datetime.fromisoformat(names[0]).replace(tzinfo=UTC)
    instants = _instants(base, names, t0)
    read, label = extractor(measure)
    texts = _Texts(read)
    files: dict[str, list[Path]] = {}
    rows: dict[str, list[dict[str, str]]] = {}
    for day in names:
        urls = {r["page_id"]: r for r in _read_tsv(base / day / "urls.tsv")}
        for f in (base / day / "pages").iterdir():
            m = _PAGE_RE.search(f.name)
            if m and m.group(1) in urls:
                files.setdefault(m.group(1), []).append(f)
                rows.setdefault(m.group(1), []).append(urls[m.group(1)])
    every = [pid for pid, fs in files.items() if len(fs) == len(names)]
    first_loc = {pid: rows[pid][0]["loc"] for pid in every}
    pages = []
    for pid in sorted(every, key=lambda p: (first_loc[p], p)):
        page_texts = [texts.get(f) for f in files[pid]]
        if all(t is None for t in page_texts):
            continue
        served = served_days(page_texts)
        events = np.array([instants[d] for d in change_days(page_texts)], dtype=np.int64)
        loc = first_loc[pid]
        path = loc.split("://", 1)[-1]
        path = path[path.find("/") :] if "/" in path else "/"
        title = files[pid][0].name.split("--", 1)[0].replace("-", " ")
        pages.append(
            ReplayPage(
                pid,
                path,
                title,
                len(pages),
                [files[pid][d] for d in served],
                [_utc_instant(r["page_updated"], t0) for r in rows[pid]],
                instants,
                events,
                rate=len(events) / len(names),
                created=-365 * DAY,
            )
        )
    return Window(names, instants, t0, pages, label, len(files) - len(pages))

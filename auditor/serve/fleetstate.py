"""The fleet table's state: one row per site and the same values as columns (numpy
arrays) to filter and sort 100,000 sites in milliseconds, made whole from every run once,
then made again from the previous state and the sites with runs saved since.

A state is never changed once made (its lazily made sort orders and host matches apart,
which any thread may fill in: the same values whoever makes them), so a request reads the
state it took while the next one is made.

Touches: the database.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from auditor.history.records import DEFAULT_RECHECK_DAYS, instant
from auditor.report.fleet import VERDICT_RANK
from auditor.report.site import site_slug
from auditor.scorer.result import VERDICTS

if TYPE_CHECKING:
    from auditor.history import History
    from auditor.history.fleetreads import RunRow

__all__ = ["SiteRow", "State", "built", "micros", "refreshed"]

#: Host searches whose matches a state keeps (a person pages through one search).
_HOST_MATCHES = 32
#: ... of which a new state makes the latest again before it answers.
_WARM_HOSTS = 4
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ARRAYS = ("rank", "code", "since", "last_run", "due", "saved", "runs", "degraded")


@dataclass(frozen=True, slots=True)
class SiteRow:
    """One site in the fleet table."""

    site: str  # the origin as stored
    slug: str  # auditor.report.site.site_slug(site): the page's URL part
    verdict: str
    since: datetime  # start of the run opening the current streak of that verdict
    previous: str | None  # the verdict before the streak (None: never another)
    runs: int
    last_run: datetime  # latest run's started_at
    due: datetime  # SiteRecord.due_at rule (start + recheck_days or default)
    saved_per_day: float | None  # savings: uniform_fetches_per_day - fetches_per_day
    degraded: bool  # the verdict ranks below the previous one
    last_run_id: int = 0  # the latest run's id (its result, segments, report)


def micros(moment: datetime) -> int:
    """An aware instant as whole microseconds since the epoch (exact, unlike a float)."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


def _saved(savings: Mapping[str, Any] | None) -> float | None:
    if not savings:
        return None
    try:
        return float(savings["uniform_fetches_per_day"]) - float(savings["fetches_per_day"])
    except (KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class _Site:
    """A site as read: its row, and the first day and verdict of each of its streaks
    (:func:`_packed`: one short text rather than tuples of dates, a fifth of the memory
    at 100,000 sites)."""

    row: SiteRow
    streaks: str


#: A site's runs as kept while the whole fleet streams past: the start and verdict of
#: each streak, the number of runs, the latest run.
_Summary = tuple[list[tuple[str, str]], int, "RunRow"]


def _summary(runs: Sequence[RunRow]) -> _Summary:
    """What a site's row needs of its runs (oldest first)."""
    starts: list[tuple[str, str]] = []
    for _, started, verdict, _ in runs:
        if not starts or starts[-1][1] != verdict:
            starts.append((started, verdict))
    return starts, len(runs), runs[-1]


def _site(origin: str, summary: _Summary, savings: Mapping[str, Any] | None) -> _Site:
    """A site from its runs' summary and its latest run's savings."""
    starts, count, (last_id, last_started, verdict, recheck) = summary
    last = instant(last_started)
    days = DEFAULT_RECHECK_DAYS if recheck is None else float(recheck)
    previous = starts[-2][1] if len(starts) > 1 else None
    degraded = previous is not None and VERDICT_RANK.get(verdict, 0) < VERDICT_RANK.get(previous, 0)
    row = SiteRow(origin, site_slug(origin), verdict, instant(starts[-1][0]), previous,
                  count, last, last + timedelta(days=days), _saved(savings), degraded,
                  last_id)  # fmt: skip
    streaks = _packed((instant(started).astimezone(UTC).date(), v) for started, v in starts)
    return _Site(row, streaks)


def _packed(streaks: Iterable[tuple[date, str]]) -> str:
    """Streaks as one text: a line each, the day's ordinal and the verdict."""
    return "\n".join(f"{day.toordinal()} {verdict}" for day, verdict in streaks)


def _unpacked(text: str) -> list[tuple[date, str]]:
    found = []
    for line in text.split("\n"):
        ordinal, _, verdict = line.partition(" ")
        found.append((date.fromordinal(int(ordinal)), verdict))
    return found


def _deltas(packed: str, sign: int) -> Iterable[tuple[date, str, int]]:
    """A site's changes to the fleet's count by verdict at each day's end."""
    streaks = _unpacked(packed)
    for i, (day, verdict) in enumerate(streaks):
        yield day, verdict, sign
        if i:
            yield day, streaks[i - 1][1], -sign


class State:
    """The fleet as one state of the history saw it (see the module)."""

    def __init__(self, marks: tuple[int, int]) -> None:
        #: The highest run id and the number of runs when read.
        self.marks = marks
        self.rows: list[SiteRow] = []
        self.streaks: list[str] = []  # each site's, packed
        self.slot: dict[str, int] = {}  # by origin and by slug
        self.by_id: dict[int, int] = {}  # by site id
        self.lowered: list[str] = []
        self.verdicts: list[str] = []  # code -> verdict
        self.counts: dict[str, int] = {}
        self.deltas: dict[tuple[date, str], int] = {}
        self.columns: dict[str, np.ndarray[Any, Any]] = {}
        self.site_pos: np.ndarray[Any, Any] = np.zeros(0, dtype=np.int64)
        self._orders: dict[str, np.ndarray[Any, Any]] = {}
        self._hosts: OrderedDict[str, np.ndarray[Any, Any]] = OrderedDict()
        self._hosts_lock = threading.Lock()  # requests of several threads share a state

    @property
    def version(self) -> str:
        """Changes whenever a run is saved or deleted."""
        return f"{self.marks[0]}-{self.marks[1]}"

    # -- made -----------------------------------------------------------------------

    def _code(self, verdict: str) -> int:
        if verdict not in self.verdicts:
            self.verdicts.append(verdict)
        return self.verdicts.index(verdict)

    def _put(self, slot: int, site: _Site, site_id: int) -> None:
        """Set ``slot`` (a new one when it is the next) to ``site``."""
        row = site.row
        if slot == len(self.rows):
            self.rows.append(row)
            self.streaks.append(site.streaks)
            self.lowered.append(row.site.lower())
        else:
            self._count(self.rows[slot], self.streaks[slot], -1)
            self.rows[slot], self.streaks[slot] = row, site.streaks
        self.slot.setdefault(row.slug, slot)
        self.slot[row.site] = slot
        self.by_id[site_id] = slot
        self._count(row, site.streaks, 1)

    def _count(self, row: SiteRow, streaks: str, sign: int) -> None:
        self.counts[row.verdict] = self.counts.get(row.verdict, 0) + sign
        if not self.counts[row.verdict]:
            del self.counts[row.verdict]
        for day, verdict, change in _deltas(streaks, sign):
            self.deltas[(day, verdict)] = self.deltas.get((day, verdict), 0) + change

    def _set_columns(self, slots: Iterable[int]) -> None:
        """The columns of ``slots`` from their rows (the arrays are this state's own)."""
        c = self.columns
        for slot in slots:
            row = self.rows[slot]
            c["rank"][slot] = VERDICT_RANK.get(row.verdict, 0)
            c["code"][slot] = self._code(row.verdict)
            c["since"][slot] = micros(row.since)
            c["last_run"][slot] = micros(row.last_run)
            c["due"][slot] = micros(row.due)
            c["saved"][slot] = math.nan if row.saved_per_day is None else row.saved_per_day
            c["runs"][slot] = row.runs
            c["degraded"][slot] = row.degraded

    def _size_columns(self, n: int) -> None:
        kinds = {"saved": np.float64, "degraded": np.bool_}
        for name in _ARRAYS:
            old = self.columns.get(name)
            new: np.ndarray[Any, Any] = np.zeros(n, dtype=kinds.get(name, np.int64))
            if old is not None:
                new[: len(old)] = old
            self.columns[name] = new

    def _sort_sites(self) -> None:
        order = sorted(range(len(self.rows)), key=lambda slot: self.rows[slot].site)
        self.site_pos = np.empty(len(order), dtype=np.int64)
        self.site_pos[order] = np.arange(len(order))

    # -- read -----------------------------------------------------------------------

    def order(self, sort: str) -> np.ndarray[Any, Any]:
        """Every slot in the order of ``sort`` (a name of SORTS, ``-`` first for
        descending): ties by site; no savings last either way."""
        found = self._orders.get(sort)
        if found is None:
            found = self._orders[sort] = self._made_order(sort)
        return found

    def _made_order(self, sort: str) -> np.ndarray[Any, Any]:
        name, descending = sort.lstrip("-"), sort.startswith("-")
        if name == "site":
            ascending = np.argsort(self.site_pos, kind="stable")
            return ascending[::-1].copy() if descending else ascending
        key = self.columns["rank" if name == "verdict" else name]
        if name == "saved":
            key = np.where(np.isnan(key), np.inf, -key if descending else key)
        elif descending:
            key = -key
        return np.lexsort((self.site_pos, key))

    def warm_like(self, old: State) -> None:
        """Make the sort orders ``old`` made, and its latest host matches, before this
        state answers: the first query after a refresh finds them made (10 to 80 ms
        each at 100,000 sites)."""
        for sort in list(old._orders):
            self.order(sort)
        for text in list(old._hosts)[-_WARM_HOSTS:]:
            self.host_mask(text)

    def host_mask(self, text: str) -> np.ndarray[Any, Any]:
        """Which sites hold ``text`` (case-insensitive); the latest searches kept."""
        needle = text.lower()
        with self._hosts_lock:
            found = self._hosts.get(needle)
        if found is None:
            found = np.fromiter((needle in s for s in self.lowered), bool, len(self.lowered))
            with self._hosts_lock:
                self._hosts[needle] = found
                while len(self._hosts) > _HOST_MATCHES:
                    self._hosts.popitem(last=False)
        return found

    def counts_in_order(self) -> dict[str, int]:
        """Sites by verdict, the contract's verdicts first in their order, then others."""
        known = {v: self.counts[v] for v in VERDICTS if v in self.counts}
        return known | {v: n for v, n in sorted(self.counts.items()) if v not in known}

    def over_time(self, today: date) -> list[tuple[date, dict[str, int]]]:
        """Sites holding each verdict at each day's end, from the first run's day."""
        if not self.deltas:
            return []
        named = {v for _, v in self.deltas}
        verdicts = [v for v in VERDICTS if v in named] + sorted(named - set(VERDICTS))
        first = min(day for day, _ in self.deltas)
        last = max(today, max(day for day, _ in self.deltas))
        held = dict.fromkeys(verdicts, 0)
        by_day: dict[date, list[tuple[str, int]]] = {}
        for (day, verdict), change in self.deltas.items():
            by_day.setdefault(day, []).append((verdict, change))
        found = []
        for n in range((last - first).days + 1):
            day = first + timedelta(days=n)
            for verdict, change in by_day.get(day, ()):
                held[verdict] += change
            found.append((day, dict(held)))
        return found


def built(history: History) -> State:
    """The whole fleet, read in one snapshot."""
    with history.read_snapshot():
        state = State(history.run_marks())
        origins = history.site_origins()
        # streamed: a site's runs at a time, each kept as its summary only
        summaries = [(site_id, _summary(runs)) for site_id, runs in history.site_runs()]
        savings = history.run_savings([summary[2][0] for _, summary in summaries])
    state._size_columns(len(summaries))
    for slot, (site_id, summary) in enumerate(summaries):
        site = _site(origins[site_id], summary, savings.get(summary[2][0]))
        state._put(slot, site, site_id)
    state._set_columns(range(len(summaries)))
    state._sort_sites()
    return state


def refreshed(history: History, old: State, *, verify: bool = True) -> State | None:
    """The state after the runs saved since ``old`` was read (None: nothing saved),
    made from ``old`` and the sites with new runs; read whole again when runs were
    deleted. Without ``verify``, a highest run id unchanged is taken for no change (one
    look-up; counting every run to see a deletion takes 40 to 100 ms at 1,000,000
    runs)."""
    if not verify and history.top_run_id() == old.marks[0]:
        return None
    with history.read_snapshot():
        marks = history.run_marks()
        if marks == old.marks:
            return None
        changed = history.sites_with_runs_after(old.marks[0])
        deleted = old.marks[1] + sum(changed.values()) != marks[1] or marks[0] < old.marks[0]
        if not deleted:
            ids = sorted(changed)
            origins = history.site_origins(ids)
            read = list(history.site_runs(ids))
            savings = history.run_savings([runs[-1][0] for _, runs in read])
    made = built(history) if deleted else _updated(old, marks, origins, read, savings)
    made.warm_like(old)
    return made


def _updated(
    old: State,
    marks: tuple[int, int],
    origins: Mapping[int, str],
    read: Sequence[tuple[int, list[RunRow]]],
    savings: Mapping[int, dict[str, Any]],
) -> State:
    state = State(marks)
    state.rows, state.streaks, state.lowered = list(old.rows), list(old.streaks), list(old.lowered)
    state.slot, state.by_id = dict(old.slot), dict(old.by_id)
    state.verdicts, state.counts, state.deltas = (
        list(old.verdicts),
        dict(old.counts),
        dict(old.deltas),
    )
    new = sum(1 for site_id, _ in read if site_id not in old.by_id)
    state.columns = {name: column.copy() for name, column in old.columns.items()}
    state._size_columns(len(old.rows) + new)
    touched = []
    for site_id, runs in read:
        slot = state.by_id.get(site_id, len(state.rows))
        site = _site(origins[site_id], _summary(runs), savings.get(runs[-1][0]))
        state._put(slot, site, site_id)
        touched.append(slot)
    state._set_columns(touched)
    if new:
        state._sort_sites()
    else:
        state.site_pos = old.site_pos
    return state

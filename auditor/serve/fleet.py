"""The fleet table of ``auditor serve``: every site with its verdict, since when, the
verdict before, its runs, when it is due and what its plan saves, filtered, sorted and
paginated on the server.

One SQL statement over every site per request is too slow at 100,000 sites (the fleet
page's answer must stay well under 300 ms), so the table lives in memory
(:mod:`auditor.serve.fleetstate`): read whole once, then brought up to date from the
runs saved since, checked at most once every ``check_seconds`` by a thread of its own
(one look-up: the highest run id; and every minute the number of runs, which sees
deletions), re-reading only the sites with new runs, and every site when runs were
deleted. A request never waits for a check or a refresh: it answers from the state at
hand while the next is read, its sort orders made before it is used.

Touches: the database.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from auditor.errors import HistoryError
from auditor.history.records import aware
from auditor.serve.fleetstate import SiteRow, State, built, micros, refreshed

if TYPE_CHECKING:
    from auditor.serve.readers import Readers

__all__ = [
    "CHECK_SECONDS",
    "DEFAULT_PER_PAGE",
    "MAX_PER_PAGE",
    "SORTS",
    "VERIFY_SECONDS",
    "FleetPage",
    "FleetQuery",
    "FleetTable",
    "SiteRow",
]

#: What the table sorts by; a ``-`` before one sorts descending. Ties go by site.
SORTS = ("verdict", "site", "since", "last_run", "due", "saved", "runs")
#: Rows a page holds at most: a page of 500 rows renders in a browser in well under a
#: second (the static index measured 1.5 s for 1,000).
MAX_PER_PAGE = 500
#: Rows a page holds unless asked otherwise.
DEFAULT_PER_PAGE = 100
#: Seconds between two checks for new runs by default: a run saved is seen within it.
CHECK_SECONDS = 1.0
#: Seconds between two counts of every run, which see runs deleted (a check between
#: looks up the highest run id alone: counting 1,000,000 runs takes 40 to 100 ms).
VERIFY_SECONDS = 60.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FleetQuery:
    """Which sites, in which order, which page."""

    verdicts: tuple[str, ...] = ()  # empty: all
    degraded: bool = False  # latest verdict worse than the previous (rank below)
    changed_since: datetime | None = None  # verdict changed (since >=) at or after this
    host: str = ""  # case-insensitive substring of the site
    sort: str = "verdict"  # worst first, then site (as the static index)
    page: int = 1  # 1-based
    per_page: int = DEFAULT_PER_PAGE  # 1..MAX_PER_PAGE

    def check(self) -> None:
        """ValueError naming what is out of bounds (the caller answers a 4xx)."""
        if self.sort.removeprefix("-") not in SORTS:
            raise ValueError(
                f"sort {self.sort!r}: choose from {', '.join(SORTS)} (- first: descending)"
            )
        if self.page < 1:
            raise ValueError(f"page {self.page}: pages count from 1")
        if not 1 <= self.per_page <= MAX_PER_PAGE:
            raise ValueError(f"per_page {self.per_page}: from 1 to {MAX_PER_PAGE}")
        if self.changed_since is not None:
            aware(self.changed_since)


@dataclass(frozen=True)
class FleetPage:
    """One page of the table, and the whole fleet's counts."""

    rows: tuple[SiteRow, ...]
    total: int  # rows matching the query
    page: int  # as asked (past the last page: no rows)
    per_page: int
    pages: int  # at least 1
    counts: dict[str, int] = field(default_factory=dict)  # the whole fleet by verdict
    version: str = ""  # changes whenever the history's runs change (cache keys, ETags)


class FleetTable:
    """The fleet in memory, safe to call from several threads at once (see the module).
    Read whole when made: a history that cannot be read fails here.

    ``background`` (the default): a daemon thread of the table checks for new runs every
    ``check_seconds`` and brings the table up to date, so no request ever waits for a
    check or a refresh; :meth:`close` stops it (before the readers are closed). Without:
    the first request after ``check_seconds`` checks, and refreshes, on its own thread
    (the others meanwhile answer from the state at hand). Runs deleted are seen within
    :data:`VERIFY_SECONDS`."""

    def __init__(
        self, readers: Readers, *, check_seconds: float = CHECK_SECONDS, background: bool = True
    ) -> None:
        self._readers = readers
        self._check_seconds = check_seconds
        self._refreshing = threading.Lock()
        self._state: State = built(readers.history())
        self._checked = self._verified = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(
                target=self._keep_up, name="auditor-fleet-table", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        """Stop the background thread, if any (idempotent)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _keep_up(self) -> None:
        while not self._stop.wait(self._check_seconds):
            with self._refreshing:
                self._refresh()

    def _current(self) -> State:
        """The state, brought up to date first (without a background thread) when the
        last check is old enough, by this thread alone."""
        if self._thread is not None or time.monotonic() - self._checked < self._check_seconds:
            return self._state
        if not self._refreshing.acquire(blocking=False):
            return self._state
        try:
            if time.monotonic() - self._checked >= self._check_seconds:
                self._refresh()
        finally:
            self._refreshing.release()
        return self._state

    def refresh(self) -> None:
        """Check for new (or deleted) runs now, and bring the table up to date."""
        with self._refreshing:
            self._refresh(verify=True)

    def _refresh(self, *, verify: bool = False) -> None:
        verify = verify or time.monotonic() - self._verified >= VERIFY_SECONDS
        try:
            made = refreshed(self._readers.history(), self._state, verify=verify)
        except HistoryError as exc:  # the page answers from what it has; said in the log
            log.warning("fleet table not brought up to date: %s", exc)
            made, verify = None, False
        if made is not None:
            self._state = made
        self._checked = time.monotonic()
        if verify:
            self._verified = self._checked

    def query(self, q: FleetQuery) -> FleetPage:
        """The page of sites ``q`` asks for (ValueError: see :meth:`FleetQuery.check`)."""
        q.check()
        state = self._current()
        order = state.order(q.sort)
        mask = _mask(state, q)
        if mask is not None:
            order = order[mask[order]]
        total = len(order)
        start = (q.page - 1) * q.per_page
        rows = tuple(state.rows[int(slot)] for slot in order[start : start + q.per_page])
        pages = max(1, math.ceil(total / q.per_page))
        return FleetPage(rows, total, q.page, q.per_page, pages, state.counts_in_order(),
                         state.version)  # fmt: skip

    def site(self, slug: str) -> SiteRow | None:
        """The site of a page's URL part (its slug), or of its origin; None: unknown."""
        state = self._current()
        slot = state.slot.get(slug)
        return None if slot is None else state.rows[slot]

    def verdicts_over_time(self, today: date | None = None) -> list[tuple[date, dict[str, int]]]:
        """Per day (UTC) from the first run's to ``today`` (default: now's): how many
        sites held each verdict at that day's end, a site counted from its first run."""
        return self._current().over_time(today or datetime.now(UTC).date())

    @property
    def version(self) -> str:
        """Changes whenever the history's runs change (cache keys, ETags)."""
        return self._current().version

    def __len__(self) -> int:
        return len(self._current().rows)


def _mask(state: State, q: FleetQuery) -> Any:
    """Which slots match ``q``'s filters (None: all of them)."""
    mask = None
    columns = state.columns

    def both(more: Any) -> Any:
        return more if mask is None else mask & more

    if q.verdicts:
        codes = [state.verdicts.index(v) for v in q.verdicts if v in state.verdicts]
        mask = both(_isin(columns["code"], codes))
    if q.degraded:
        mask = both(columns["degraded"])
    if q.changed_since is not None:
        mask = both(columns["since"] >= micros(q.changed_since))
    if q.host:
        mask = both(state.host_mask(q.host))
    return mask


def _isin(column: Any, codes: list[int]) -> Any:
    import numpy as np

    return np.isin(column, np.array(codes, dtype=column.dtype))

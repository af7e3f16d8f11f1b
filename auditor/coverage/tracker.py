"""The state of a coverage check as it reads fetches: per inventory slot a few bytes
(crawled or not, when last seen, its findings as bits), bounded examples, and the
distinct URLs crawled but not listed (orphans) as hashes.

Memory is the inventory's (about 11 bytes a URL here) plus the orphans' hashes (8 bytes
each, at most :data:`ORPHAN_MAX`), whatever the number of fetches read: a URL fetched a
hundred times takes its slot once. A URL's latest fetch decides its findings (a later
fetch that answers 200 clears an earlier 404); examples are kept for findings still
standing, the first ones met, at most ``limit`` per sub-sitemap and finding.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from auditor.coverage.findings import BITS, CRAWL, Observation, judge
from auditor.coverage.inventory import InventoryIndex, hashes_of

__all__ = ["ORPHAN_MAX", "Example", "Orphans", "Tracker"]

#: Distinct orphans counted exactly, at most (32 MB of hashes); beyond, the count is a
#: lower bound (``exact`` false).
ORPHAN_MAX = 4_000_000
_NEVER = np.iinfo(np.int64).min
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Example:
    """One URL with a finding: what shows it, and who fetched it (``crawl``, ``sample``)."""

    url: str
    detail: str | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """The example as a JSON object."""
        return {"url": self.url, "detail": self.detail, "source": self.source}


@dataclass
class Orphans:
    """Distinct URLs of the site crawled but listed in no sitemap."""

    limit: int | None
    examples: list[Example] = field(default_factory=list)
    exact: bool = True
    _known: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _pending: list[np.ndarray] = field(default_factory=list)
    _pending_size: int = 0
    _named: set[int] = field(default_factory=set)  # the examples' hashes

    def add(self, hashes: np.ndarray, seen: Sequence[Observation]) -> None:
        """Count these orphans (hashes and their fetches), new ones given as examples."""
        if self.limit is None or len(self.examples) < self.limit:
            self._examples(hashes, seen)
        self._pending.append(hashes)
        self._pending_size += len(hashes)
        if self._pending_size >= 65_536:
            self._merge()

    def _examples(self, hashes: np.ndarray, seen: Sequence[Observation]) -> None:
        """The first orphans met are the examples: while there is room, every new one."""
        for i, value in enumerate(hashes.tolist()):
            if self.limit is not None and len(self.examples) >= self.limit:
                return
            if value not in self._named:
                self._named.add(value)
                self.examples.append(Example(seen[i].url, _status(seen[i].status), seen[i].source))

    def _merge(self) -> None:
        if not self._pending:
            return
        merged = np.union1d(self._known, np.concatenate(self._pending))
        self._pending, self._pending_size = [], 0
        if len(merged) > ORPHAN_MAX:
            self.exact = False
            merged = merged[:ORPHAN_MAX]
        self._known = merged

    @property
    def count(self) -> int:
        """How many distinct orphans were met (a lower bound unless ``exact``)."""
        self._merge()
        return len(self._known)


def _status(status: int | None) -> str:
    return "no answer" if status is None else f"HTTP {status}"


class Tracker:
    """What the fetches read so far show of an inventory's URLs."""

    def __init__(self, inventory: InventoryIndex, limit: int | None) -> None:
        n = len(inventory)
        self.inventory = inventory
        self.limit = limit
        self.crawled = np.zeros(n, dtype=bool)
        self.seen_at = np.full(n, _NEVER, dtype=np.int64)
        self.flags = np.zeros(n, dtype=np.uint8)
        #: (sub-sitemap code, finding) -> slot -> example, for the findings standing
        self.examples: dict[tuple[int, str], dict[int, Example]] = {}
        self.orphans = Orphans(limit)
        self.fetches = 0  # observations of the site read

    def observe(self, seen: Sequence[Observation]) -> None:
        """Take in a batch of the site's fetches (any order)."""
        if not seen:
            return
        self.fetches += len(seen)
        hashes = hashes_of([s.url for s in seen])
        slots = self.inventory.slots(hashes)
        unlisted = slots < 0
        if unlisted.any():
            where = np.flatnonzero(unlisted)
            self.orphans.add(hashes[where], [seen[i] for i in where.tolist()])
        for i in np.flatnonzero(~unlisted).tolist():
            self._observe(int(slots[i]), seen[i])

    def _observe(self, slot: int, seen: Observation) -> None:
        if seen.source == CRAWL:
            self.crawled[slot] = True
        at = _micros(seen.fetched_at)
        if at < self.seen_at[slot]:
            return  # an older fetch than the one that decided
        self.seen_at[slot] = at
        found = judge(seen)
        bits = 0
        for code in found:
            bits |= BITS[code]
        before = int(self.flags[slot])
        if bits == before == 0:
            return
        self.flags[slot] = bits
        self._examples(slot, before, found, seen)

    def _examples(self, slot: int, before: int, found: dict[str, str], seen: Observation) -> None:
        code = int(self.inventory.codes[slot])
        for finding, bit in BITS.items():
            if before & bit and finding not in found:
                self.examples.get((code, finding), {}).pop(slot, None)
        for finding, detail in found.items():
            kept = self.examples.setdefault((code, finding), {})
            if slot in kept or self.limit is None or len(kept) < self.limit:
                kept[slot] = Example(seen.url, detail, seen.source)


def _micros(at: datetime) -> int:
    span = at - _EPOCH
    return (span.days * 86_400 + span.seconds) * 1_000_000 + span.microseconds

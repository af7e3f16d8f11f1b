"""The URLs a walk has emitted, kept small: a million take about 10 MB, not 80.

A Python ``set`` of 64-bit hashes costs about 80 bytes a URL (the int object and
its share of the table). Here only the recent hashes live in a set; every
``RECENT_MAX`` of them are folded into one sorted ``int64`` array (8 bytes a
URL), searched in C for a whole batch at once, behind a 4 MB Bloom filter that
answers "certainly new" for nearly every hash of a batch of new URLs (a binary
search of a large array costs a cache miss at each step). numpy is imported only
when a walk first grows that large.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RECENT_MAX", "SeenUrls"]

#: Hashes kept in the set before they are folded into the sorted array.
RECENT_MAX = 65_536
_BLOOM_BITS = 1 << 25  # two bits a hash: about 1 in 250 false "maybe" at 1,000,000 URLs
_BLOOM_MASK = _BLOOM_BITS - 1


class SeenUrls:
    """Hashes of emitted URLs. ``len()`` counts them.

    Per batch: :meth:`add_all_new` for the common case (all new: marked at once), or
    :meth:`begin` with the batch's hashes, then :meth:`add` for each URL in turn.
    """

    def __init__(self) -> None:
        self._recent: set[int] = set()
        self._frozen: np.ndarray | None = None  # sorted, unique, none of them in _recent
        self._hits: set[int] = set()  # the current batch's hashes found in _frozen
        self._bloom: np.ndarray | None = None  # bits set by the hashes in _frozen

    def __len__(self) -> int:
        return len(self._recent) + (0 if self._frozen is None else len(self._frozen))

    def add_all_new(self, hashes: set[int]) -> bool:
        """Mark ``hashes`` seen when none of them was; else mark nothing and say False."""
        self._fold()
        if not self._recent.isdisjoint(hashes) or self._frozen_hits(hashes):
            return False
        self._recent |= hashes
        return True

    def begin(self, hashes: Iterable[int]) -> None:
        """Get ready for :meth:`add` calls on these hashes (one batch)."""
        self._fold()
        self._hits = set() if self._frozen is None else self._frozen_hits(set(hashes))

    def add(self, value: int) -> bool:
        """Mark one hash seen (announced by :meth:`begin`); False when it already was."""
        recent = self._recent
        if value in self._hits or value in recent:
            return False
        recent.add(value)
        return True

    def _frozen_hits(self, hashes: set[int]) -> set[int]:
        frozen = self._frozen
        if frozen is None or not hashes:
            return set()
        import numpy as np

        wanted = np.fromiter(hashes, dtype=np.int64, count=len(hashes))
        maybe = np.ones(len(wanted), dtype=bool)
        for bits in _bloom_bits(wanted):
            maybe &= (self._bloom[bits >> 3] >> (bits & 7).astype(np.uint8)) & 1 != 0  # type: ignore[index]
        if not maybe.any():
            return set()
        wanted = wanted[maybe]
        where = np.searchsorted(frozen, wanted)
        where[where == len(frozen)] = 0
        return set(wanted[frozen[where] == wanted].tolist())

    def _fold(self) -> None:
        """Move the recent hashes into the sorted array once there are many."""
        if len(self._recent) < RECENT_MAX:
            return
        import numpy as np

        recent = np.fromiter(self._recent, dtype=np.int64, count=len(self._recent))
        recent.sort()
        if self._bloom is None:
            self._bloom = np.zeros(_BLOOM_BITS // 8, dtype=np.uint8)
        for bits in _bloom_bits(recent):
            np.bitwise_or.at(self._bloom, bits >> 3, (1 << (bits & 7)).astype(np.uint8))
        frozen: Any = self._frozen
        if frozen is None:
            self._frozen = recent
        else:
            self._frozen = np.insert(frozen, np.searchsorted(frozen, recent), recent)
        self._recent = set()


def _bloom_bits(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two bit positions of each hash in the Bloom filter: its low and its high half."""
    return values & _BLOOM_MASK, (values >> 32) & _BLOOM_MASK

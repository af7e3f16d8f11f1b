"""The URLs a walk has emitted, kept small: a million take about 10 MB, not 80.

A Python ``set`` of 64-bit hashes costs about 80 bytes a URL (the int object and
its share of the table). Here only the recent hashes live in a set; every
``RECENT_MAX`` of them are folded into one sorted ``int64`` array (8 bytes a
URL), searched in C for a whole batch at once. numpy is imported only when a
walk first grows that large.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RECENT_MAX", "SeenUrls"]

#: Hashes kept in the set before they are folded into the sorted array.
RECENT_MAX = 65_536


class SeenUrls:
    """Hashes of emitted URLs. ``len()`` counts them.

    Per batch: :meth:`add_all_new` for the common case (all new: marked at once), or
    :meth:`begin` with the batch's hashes, then :meth:`add` for each URL in turn.
    """

    def __init__(self) -> None:
        self._recent: set[int] = set()
        self._frozen: np.ndarray | None = None  # sorted, unique, none of them in _recent
        self._hits: set[int] = set()  # the current batch's hashes found in _frozen

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
        frozen: Any = self._frozen
        if frozen is None:
            self._frozen = recent
        else:
            self._frozen = np.insert(frozen, np.searchsorted(frozen, recent), recent)
        self._recent = set()

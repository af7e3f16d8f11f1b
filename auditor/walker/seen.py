"""The URLs a walk has emitted, kept small: a million take about 10 MB, not 80.

A Python ``set`` of 64-bit hashes costs about 80 bytes a URL (the int object and
its share of the table). Here only the recent hashes live in a set; every
``RECENT_MAX`` of them are folded into one sorted ``int64`` array (8 bytes a
URL), searched in C for a whole batch at once, behind an 8 MB Bloom filter that
answers "certainly new" for nearly every hash of a batch of new URLs (a binary
search of a large array costs a cache miss at each step). numpy is imported only
when a walk first grows that large.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RECENT_MAX", "SeenUrls", "as_keys", "dedup_keys"]

#: Hashes kept in the set before they are folded into the sorted array.
RECENT_MAX = 65_536
_BLOOM_SIZE = 1 << 23  # a byte a position, two a hash: 1 in 20 false "maybe" at 1,000,000
_BLOOM_MASK = _BLOOM_SIZE - 1


def dedup_keys(locs: Sequence[str | None], fast: tuple[str, ...]) -> list[int]:
    """The hash each loc is deduplicated by (0 for a missing one): that of its
    :func:`~auditor.http.hosts.url_key` (RFC 3986 6.2.2 percent-escapes, one spelling per
    host), so ``/a%7eb`` and ``/a~b``, or ``Example.COM`` and ``example.com``, are one URL.

    The common loc is its own key, told without parsing it: no ``%`` and on one of the
    ``fast`` prefixes (the file's allowed origins, already in their one spelling), or,
    without such prefixes (a local file), a scheme and host already in theirs. A loc
    with escapes on a fast prefix is keyed by its escapes alone (a wiki's every URL).
    """
    if fast:
        present = list(filter(None, locs))
        if present and as_keys("".join(present)) and _one_prefix(present, fast):
            keys = list(map(hash, locs))  # the whole batch plain: C loops (the hot path)
            if len(present) < len(locs):
                keys = [key if loc else 0 for key, loc in zip(keys, locs, strict=True)]
            return keys
        return [
            (hash(loc) if as_keys(loc) else _escaped_key(loc))
            if loc and loc.startswith(fast)
            else _slow_key(loc)
            for loc in locs
        ]
    return [
        hash(loc) if loc and as_keys(loc) and _plain_head(_head(loc)) else _slow_key(loc)
        for loc in locs
    ]


#: What the URL parser removes wherever it is in a URL (WHATWG's "ASCII tab or newline"),
#: so that a loc holding one is not written as its key.
_REMOVED = ("\t", "\n", "\r")


def as_keys(joined: str, unbroken: bool = False) -> bool:
    """True when each loc of ``joined`` (locs end to end) is written as
    :func:`~auditor.http.hosts.url_key` writes it, given that its scheme and host are:
    no escape, no tab or line break. A few ``memchr`` passes, at C speed; one when the
    caller has found no tab or line break already (``unbroken``)."""
    return "%" not in joined and (unbroken or not any(c in joined for c in _REMOVED))


def _one_prefix(locs: list[str], fast: tuple[str, ...]) -> bool:
    """True when every one of ``locs`` starts with one of the ``fast`` prefixes: told from
    the least and the greatest alone (every string sorted between two that share a prefix
    shares it too), at C speed."""
    least, greatest = min(locs), max(locs)
    return any(least.startswith(p) and greatest.startswith(p) for p in fast)


def _escaped_key(loc: str) -> int:
    """The key of a loc with escapes on a fast prefix: ``url_key`` leaves its scheme and
    host as they are and only rewrites its escapes, the same in the path, the query and
    the fragment. It is parsed after all where the parser would also remove something
    (a tab or a line break)."""
    if not loc.isprintable():
        return _slow_key(loc)
    from auditor.http.hosts import escapes

    return hash(escapes(loc))


def _slow_key(loc: str | None) -> int:
    from auditor.http.hosts import url_key

    return hash(url_key(loc)) if loc else 0


def _head(loc: str | None) -> str:
    """``scheme://host[:port]/`` of a loc (or the whole of it, when no path follows)."""
    if not loc:
        return ""
    end = loc.find("/", loc.find("//") + 2)
    return loc if end < 0 else loc[: end + 1]


@lru_cache(maxsize=1_024)
def _plain_head(head: str) -> bool:
    """True when a URL starting with ``head`` is written as its url_key writes it."""
    from auditor.http.hosts import url_key

    return bool(head) and head.endswith("/") and url_key(head) == head


class SeenUrls:
    """Hashes of emitted URLs. ``len()`` counts them.

    Per batch: :meth:`add_all_new` for the common case (all new: marked at once), or
    :meth:`begin` with the batch's hashes, then :meth:`add` for each URL in turn.
    """

    def __init__(self) -> None:
        self._recent: set[int] = set()
        self._frozen: np.ndarray | None = None  # sorted, unique, none of them in _recent
        self._bloom: np.ndarray | None = None  # positions set by the hashes in _frozen
        self._hits: set[int] = set()  # the current batch's hashes found in _frozen
        # _recent again, as arrays (batches) and ints (one by one), once _frozen exists:
        # folding them needs no pass over the set's scattered int objects.
        self._arrays: list[np.ndarray] = []
        self._ints: list[int] = []

    def __len__(self) -> int:
        return len(self._recent) + (0 if self._frozen is None else len(self._frozen))

    def add_all_new(self, hashes: set[int]) -> bool:
        """Mark ``hashes`` seen when none of them was; else mark nothing and say False."""
        if not self._recent.isdisjoint(hashes):
            return False
        if self._frozen is not None:
            import numpy as np

            wanted = np.fromiter(hashes, dtype=np.int64, count=len(hashes))
            if self._frozen_hits(wanted):
                return False
            self._arrays.append(wanted)
        self._recent |= hashes
        if len(self._recent) >= RECENT_MAX:
            self._fold()
        return True

    def begin(self, hashes: Iterable[int]) -> None:
        """Get ready for :meth:`add` calls on these hashes (one batch)."""
        if len(self._recent) >= RECENT_MAX:
            self._fold()
        self._hits = set()
        if self._frozen is not None:
            import numpy as np

            distinct = set(hashes)
            if distinct:
                wanted = np.fromiter(distinct, dtype=np.int64, count=len(distinct))
                self._hits = self._frozen_hits(wanted)

    def add(self, value: int) -> bool:
        """Mark one hash seen (announced by :meth:`begin`); False when it already was."""
        recent = self._recent
        if value in self._hits or value in recent:
            return False
        recent.add(value)
        if self._frozen is not None:
            self._ints.append(value)
        return True

    def _frozen_hits(self, wanted: np.ndarray) -> set[int]:
        """The hashes of ``wanted`` (an int64 array) that are in the sorted array."""
        import numpy as np

        frozen: Any = self._frozen
        bloom: Any = self._bloom
        low, high = _bloom_bits(wanted)
        maybe = bloom[low] & bloom[high]
        if not maybe.any():
            return set()
        wanted = wanted[maybe]
        where = np.searchsorted(frozen, wanted)
        where[where == len(frozen)] = 0
        return set(wanted[frozen[where] == wanted].tolist())

    def _fold(self) -> None:
        """Move the recent hashes into the sorted array."""
        import numpy as np

        if self._frozen is None:  # the first time: the set itself, once
            recent = np.fromiter(self._recent, dtype=np.int64, count=len(self._recent))
            self._bloom = np.zeros(_BLOOM_SIZE, dtype=bool)
        else:
            recent = np.concatenate([*self._arrays, np.array(self._ints, dtype=np.int64)])
        recent.sort()
        for bits in _bloom_bits(recent):
            self._bloom[bits] = True  # type: ignore[index]
        frozen: Any = self._frozen
        if frozen is None:
            self._frozen = recent
        else:
            self._frozen = np.insert(frozen, np.searchsorted(frozen, recent), recent)
        self._recent = set()
        self._arrays, self._ints = [], []


def _bloom_bits(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two positions of each hash in the Bloom filter: from its low and its high half."""
    return values & _BLOOM_MASK, (values >> 32) & _BLOOM_MASK

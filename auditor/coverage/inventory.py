"""A site's inventory kept compact for coverage: one 64-bit hash per URL, sorted, with
each URL's sub-sitemap as a code, so that a million URLs take about 12 MB (not the
hundred of a frame of strings) and a batch of crawled URLs is looked up in C.

The hashes are Python's own ``hash()`` of the strings: stable within one process, which
is all a check needs (the inventory and the log are hashed by the same process). Two
URLs of a million share a 64-bit hash with a chance of about 3 in 100 million.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from auditor.history.state import StateLocs

__all__ = ["NO_SITEMAP", "InventoryIndex", "hashes_of"]

#: The name of the bucket of URLs the inventory gives no sub-sitemap.
NO_SITEMAP = "(none)"
#: Locs decoded at a time (a few MB of strings).
_BATCH = 16_384


def hashes_of(urls: Sequence[str]) -> np.ndarray:
    """Each URL's 64-bit hash, as an int64 array."""
    return np.fromiter(map(hash, urls), dtype=np.int64, count=len(urls))


class InventoryIndex:
    """The URLs of an inventory as sorted hashes (``slot`` i is the i-th smallest),
    each slot's sub-sitemap code into ``sitemaps``; the locs themselves are read again
    from the blob when examples need them (:meth:`batches`)."""

    def __init__(self, locs: StateLocs) -> None:
        self._locs = locs
        self.sitemaps = [*locs.sitemaps, NO_SITEMAP]
        hashes = np.empty(locs.urls, dtype=np.int64)
        done = 0
        for batch in locs.batches(_BATCH):
            hashes[done : done + len(batch)] = hashes_of(batch)
            done += len(batch)
        order = np.argsort(hashes)
        self.hashes: np.ndarray = hashes[order]
        del hashes
        codes = np.take(locs.sitemap_codes, order).astype(np.int32)
        del order
        codes[codes < 0] = len(locs.sitemaps)
        self.codes: np.ndarray = codes

    def __len__(self) -> int:
        return len(self.hashes)

    def slots(self, hashes: np.ndarray) -> np.ndarray:
        """The slot of each hash, -1 for a URL the inventory does not list."""
        if not len(self.hashes):
            return np.full(len(hashes), -1, dtype=np.int64)
        where = np.searchsorted(self.hashes, hashes)
        where[where == len(self.hashes)] = 0
        return np.where(self.hashes[where] == hashes, where, -1)

    def batches(self) -> Iterator[tuple[list[str], np.ndarray]]:
        """The inventory's locs in its order, in batches, with their slots."""
        for batch in self._locs.batches(_BATCH):
            yield batch, self.slots(hashes_of(batch))

    def code_of(self, sitemap: str) -> int:
        """The code of a sub-sitemap, added when the inventory gives it no URL."""
        try:
            return self.sitemaps.index(sitemap)
        except ValueError:
            self.sitemaps.append(sitemap)
            return len(self.sitemaps) - 1

"""Noisy hashes: a crawl log whose content hashes change on (nearly) every re-fetch is
refused as evidence, in plain words.

A crawler's ``content_hash`` is compared as given: a hash of the whole body sees the
page's CSRF token, its "rendered at" footer, a rotating "trending" box, and differs on
every fetch though nothing changed. Counted, such a log says every page changed while its
lastmod did not move, and an accurate site is condemned. Bodies are not subject to this
test: auditor compares them on their main content, the site's template left out.

The test, per site and per ``auditor crawled`` run, on the fetches compared by the
crawler's hash alone (a previous good fetch with a hash, no body):

- at least :data:`NOISY_MIN_COMPARED` such comparisons, of which at least
  :data:`NOISY_SHARE` differ ("nearly every re-fetch");
- and the same among the *quiet* ones, where a change was all but impossible: at least
  :data:`NOISY_MIN_QUIET` of them, at least :data:`NOISY_SHARE` differing. A re-fetch is
  quiet when the stretch of time in which its page could have changed without lastmod
  showing it is at most :data:`QUIET_SPAN`: the two fetches that close together, or the
  sitemap's lastmod (from a walk made after the previous fetch, the URL listed at or
  before it) vouching that nothing changed up to that walk, with the fetch at most
  :data:`QUIET_SPAN` after it.

When both hold, the run's hash comparisons of that site count for nothing: not as
evidence of lastmod, not in the pages' change rates (``auditor crawled`` says so, and the
log keeps the fetches, marked ``hash-refused``). The fetches still date the crawler's
copies, and its next run is tested afresh.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from auditor.crawl.resolve import Spans

__all__ = [
    "NOISY_MIN_COMPARED",
    "NOISY_MIN_QUIET",
    "NOISY_SHARE",
    "QUIET_SPAN",
    "HashNoise",
    "quiet",
]

#: The share of hash comparisons that must differ for a log to look noisy. A real site
#: changes a minority of its pages between two fetches (even a busy one rewrites few
#: pages a day), so "nearly every" page differing is a hash that sees something other
#: than content; 0.95 leaves room for the odd page served byte for byte the same twice (an
#: error page, a cached copy) in a noisy log.
NOISY_SHARE = 0.95
#: Hash comparisons needed before a log's share is read at all: with fewer, every page
#: differing can be a small crawl of a site's busiest pages (19 of 20 differing already
#: falls under the share).
NOISY_MIN_COMPARED = 20
#: Quiet re-fetches needed to confirm it: ten of them all differing is past chance for
#: any site whose pages do not change several times a day.
NOISY_MIN_QUIET = 10
#: How short a stretch with nothing to vouch for it keeps a re-fetch quiet. A page that
#: changes once a day (a busy page) changes in 6 hours with probability 1 - e^-0.25, 22%:
#: for 95% of quiet re-fetches to differ for real, every page would have to change a dozen
#: times a day.
QUIET_SPAN = timedelta(hours=6)


def quiet(
    previous: Spans, fetched: Spans, lastmod: Spans, listed: np.ndarray, walked_at: np.ndarray
) -> np.ndarray:
    """Which re-fetches are quiet (module docstring): spans as :func:`~auditor.crawl.resolve.judge`
    takes them, ``walked_at`` the walk each URL's lastmod was read from (NaN: none)."""
    span = QUIET_SPAN.total_seconds()
    f1_start, _ = previous
    _, f2_end = fetched
    _, l_end = lastmod
    with np.errstate(invalid="ignore"):  # NaN compares False
        vouched = listed & (l_end <= f1_start) & (walked_at > f1_start)
        since = np.where(vouched, walked_at, f1_start)  # nothing changed up to then
        return np.asarray(f2_end - since <= span)


@dataclass
class HashNoise:
    """One site's comparisons by the crawler's hash in one ``crawled`` run."""

    compared: int = 0
    differ: int = 0
    quiet: int = 0
    quiet_differ: int = 0
    pending: int = 0  # of the compared, those left pending a walk

    def add(self, differ: bool, quiet: bool, pending: bool) -> None:
        """Count one comparison."""
        self.compared += 1
        self.differ += differ
        self.quiet += quiet
        self.quiet_differ += differ and quiet
        self.pending += pending

    def count(self, differ: np.ndarray, quiet: np.ndarray, pending: np.ndarray) -> None:
        """Count comparisons given as arrays, one element each."""
        self.compared += len(differ)
        self.differ += int(differ.sum())
        self.quiet += int(quiet.sum())
        self.quiet_differ += int((differ & quiet).sum())
        self.pending += int(pending.sum())

    def merge(self, other: HashNoise) -> None:
        """Add ``other``'s comparisons to these."""
        self.compared += other.compared
        self.differ += other.differ
        self.quiet += other.quiet
        self.quiet_differ += other.quiet_differ
        self.pending += other.pending

    @property
    def noisy(self) -> bool:
        """True when the hashes change on nearly every re-fetch, the quiet ones too."""
        return (
            self.compared >= NOISY_MIN_COMPARED
            and self.differ >= NOISY_SHARE * self.compared
            and self.quiet >= NOISY_MIN_QUIET
            and self.quiet_differ >= NOISY_SHARE * self.quiet
        )

    def sentence(self) -> str:
        """What ``auditor crawled`` says of a noisy log, in plain words."""
        pages = "page" if self.compared == 1 else "pages"
        verb = "differs" if self.differ == 1 else "differ"
        return (
            f"the hashes of {self.differ:,} of {self.compared:,} re-fetched {pages} {verb}:"
            " they look like whole-page hashes with per-request content; not counted as"
            " evidence — send bodies, or hash the main content as docs/frontier.md shows"
        )

"""Where doubt is: whether sampling a sub-sitemap can teach anything more in this run.

The sampler fetches pages one at a time and asks, after each, which sub-sitemaps are
decided; it stops sampling those. The answer follows the verdict rules on the pages
fetched so far (a sequential test on agreement: trust once the Wilson 95% lower bound
clears the bar, untrusted once contrary evidence has an upper bound under it):

- ``condemned``: the lastmod values alone decide (no lastmod, or the generation moment),
  whatever the pages say: a small confirming sample is enough;
- ``decided``: the pages decided it, either way;
- ``open``: undecided, or trusted from earlier runs but not yet confirmed by this one.

Looking at the evidence after every page and stopping at the first decision errs more
often than one look at a fixed sample (optional stopping). Contrary evidence therefore
stops sampling only once it holds at 99% (:data:`Z_STOP`); the verdict at the end is the
usual one. tests/benchmarks/bench_sampling.py --error-rates measures what remains.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from auditor.dispersion import SegmentDispersion
from auditor.evidence.credibility import MIN_SHARED_PAGES
from auditor.scorer.result import SegmentVerdict
from auditor.scorer.rules import CONTRARY_CODES, MIN_PANEL, contrary_counts, trust_route
from auditor.scorer.tally import Tally
from auditor.scorer.window import SegmentEvidence

__all__ = [
    "CONDEMNED",
    "DECIDED",
    "MIN_CONFIRM",
    "MIN_PAGES_TO_JUDGE",
    "MIN_STOP_AGAINST",
    "OPEN",
    "THIN_WANTED",
    "Z_STOP",
    "segment_status",
    "wanted_pages",
]

CONDEMNED = "condemned"
DECIDED = "decided"
OPEN = "open"
#: A sub-sitemap trusted on earlier runs' evidence must show this many of this run's
#: pages compared with lastmod, none against it, before sampling it stops. A segment
#: whose agreement fell under the bar has at least 20% of pages against, and then shows
#: none in 14 pages with probability 0.8 ** 14 = 0.044: a degradation is seen in the
#: run it starts with 95% probability.
MIN_CONFIRM = 14
#: Contrary evidence decides only once this many of the segment's pages are read: a
#: dateModified shared across the sample (a build time) is recognised only from
#: :data:`~auditor.evidence.credibility.MIN_SHARED_PAGES` pages on.
MIN_PAGES_TO_JUDGE = MIN_SHARED_PAGES
#: The normal quantile contrary evidence must hold at to stop sampling early (99%
#: two-sided): at 95% a sub-sitemap whose pages agree 85% of the time was condemned
#: early 10 times as often as by one look at 25 pages.
Z_STOP = 2.5758293035489004
#: ... and, where some pages speak for lastmod, only on at least this many pages against
#: (one more than a verdict needs; unanimous contrary evidence stops at once):
#: 3 against of 4 holds at 99% by the bound, yet on a real Hexo site whose few
#: over-reporting tag pages sat among many right pages, which 4 panel pages came first
#: decided the group's verdict (trusted on 3 seeds of 5, untrusted on 1, sampling stopped
#: at 11 requests). A frozen lastmod shows 5 or more at once.
MIN_STOP_AGAINST = 4
_CONDEMNING_FLAGS = frozenset({"no-lastmod", "generation-time"})
#: Pages a segment left inconclusive on the previous run is sampled first, at least:
#: enough for a panel the across-runs route can stand on next time
#: (:data:`~auditor.scorer.rules.MIN_PANEL`), which a segment sampled by its size alone
#: (2 pages of 50 for a 5% group) never reaches.
THIN_WANTED = MIN_PANEL


def segment_status(
    verdict: SegmentVerdict, segment: SegmentDispersion, evidence: SegmentEvidence
) -> str:
    """The sampling status of one sub-sitemap given its verdict on the pages so far."""
    if any(f.code in _CONDEMNING_FLAGS for f in segment.flags):
        return CONDEMNED
    if verdict.verdict == "untrusted":
        return DECIDED if _surely_contrary(evidence) else OPEN
    if verdict.verdict != "trusted" or any(r.code in CONTRARY_CODES for r in verdict.reasons):
        return OPEN  # undecided, or trusted while contrary evidence waits for confirmation
    if trust_route(evidence.own) is not None:
        return DECIDED  # this run alone earns trust
    if evidence.checked >= MIN_CONFIRM and evidence.against == 0:
        return DECIDED  # earlier runs earned it, this one confirms
    return OPEN


def _surely_contrary(evidence: SegmentEvidence) -> bool:
    """Contrary evidence that holds at :data:`Z_STOP`, on enough pages of this run."""
    if evidence.own.fetched < MIN_PAGES_TO_JUDGE:
        return False
    tallies = (evidence.own, evidence.pooled, evidence.shared or Tally())
    return any(
        against >= MIN_STOP_AGAINST or good == 0
        for tally in tallies
        for _, against, good, _ in contrary_counts(tally, Z_STOP)
    )


def wanted_pages(previous_segments: Mapping[str, str]) -> dict[str, int]:
    """Pages wanted at least this run, by segment key: :data:`THIN_WANTED` for each
    segment the previous run left ``inconclusive`` (its evidence too thin)."""
    return {
        key: THIN_WANTED for key, verdict in previous_segments.items() if verdict == "inconclusive"
    }

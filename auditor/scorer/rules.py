"""The thresholds of the verdict rules and the tests on counts they stand on.

Pure arithmetic on tallies: what earns trust, what is contrary evidence, and when a
shared lastmod value condemns. The verdicts (verdict.py) and their words (reasons.py)
are built on these.

Touches: nothing.
"""

from __future__ import annotations

from auditor.scorer.stats import Z_95, wilson
from auditor.scorer.tally import Tally
from auditor.scorer.window import SegmentEvidence

__all__ = [
    "CONTRARY_CODES",
    "MIN_CHANGES",
    "MIN_CONTRARY",
    "MIN_DATE_COMPARISONS",
    "MIN_PANEL",
    "MIN_SHARED_CHECKED",
    "PUBLISHED_SHARE",
    "TRUST_BAR",
    "contrary_counts",
    "dates_prove_nothing",
    "shared_state",
    "trust_route",
]

#: Agreement must have a Wilson 95% lower bound at least this high to earn trust
#: (the design's own example: "a Wilson 95% lower bound of agreement >= 0.8"; docs/verdicts.md).
TRUST_BAR = 0.8
#: Fewest comparisons with a credible dateModified before they can earn trust (16
#: agreeing of 16 are needed anyway to clear the bar; this guards odd thresholds).
MIN_DATE_COMPARISONS = 10
#: Fewest panel pages compared across runs, and fewest changes observed among them,
#: before the across-runs route proves anything: with no change seen, "lastmod did
#: not move" is consistent with a frozen lastmod too.
MIN_PANEL = 10
MIN_CHANGES = 3
#: Contrary evidence must be at least this many pages, and its agreement's Wilson
#: upper bound below the bar: we are then confident lastmod is not accurate enough.
#: Two pages condemn an honest lastmod too often: with 90% of pages agreeing, two of
#: the first three compared are against 2.8% of the time (8% at 85%); three of three,
#: 0.1% (0.3%). A real git-lastmod docs sitemap (precision 0.94 over the whole site) was
#: condemned on 2 pages after 5 requests; a page of its template moved, its words not.
MIN_CONTRARY = 3
#: A shared lastmod value that nothing condemns is a note, not a verdict, but it lowers
#: confidence: trust then also needs this many of the pages carrying that value to agree
#: with a credible date. Only a date can vouch for a value that did not move: across runs
#: an unmoved value on an unchanged page looks the same whether lastmod is right or frozen.
#: Five such pages, all agreeing, leave a 0.8 chance per page of a wrong value at 0.33.
MIN_SHARED_CHECKED = 5
#: Agreeing dates prove nothing when at least this share of them are the pages' publication
#: dates too: a site whose posts were never updated (or whose dateModified repeats
#: datePublished) agrees with a lastmod that is the publish date, frozen or not. A real
#: Hugo site agreed on every sampled post that way while its lastmod moved on 2 of 53
#: changed pages. Nine in ten leaves room for a few updated posts among many that never were.
PUBLISHED_SHARE = 0.9


#: The kinds of contrary evidence (:func:`contrary_counts`), as reason codes.
CONTRARY_CODES = frozenset(
    {"date-modified-mismatch", "changed-without-lastmod", "lastmod-without-change"}
)


def dates_prove_nothing(tally: Tally) -> bool:
    """Nearly every agreeing credible date is the page's publication date as well
    (:data:`PUBLISHED_SHARE`): lastmod, dateModified and datePublished all repeat one
    date, which agrees whether or not lastmod would follow an update."""
    good = tally.agree + tally.last_modified_agree
    return good > 0 and tally.published_agree >= PUBLISHED_SHARE * good


def trust_route(tally: Tally) -> str | None:
    """The route that earns trust on ``tally`` (``date-modified`` or ``changes``), or None.
    Dates that prove nothing (:func:`dates_prove_nothing`) leave only the changes route."""
    dated = tally.with_date_modified + tally.with_last_modified  # Last-Modified as backup
    if dated >= MIN_DATE_COMPARISONS and not dates_prove_nothing(tally):
        low = wilson(tally.agree + tally.last_modified_agree, dated)
        if low is not None and low[0] >= TRUST_BAR:
            return "date-modified"
    if tally.compared >= MIN_PANEL and tally.changed >= MIN_CHANGES:
        low = wilson(tally.consistent, tally.compared)
        if low is not None and low[0] >= TRUST_BAR:
            return "changes"
    return None


def contrary_counts(tally: Tally, z: float = Z_95) -> list[tuple[str, int, int, int]]:
    """Contrary evidence in ``tally``: (code, pages against, pages for, trials) for each
    kind with at least :data:`MIN_CONTRARY` pages against and an agreement whose Wilson
    upper bound (95% two-sided, or as ``z`` says) is under the bar."""
    found = []
    checks = (
        ("date-modified-mismatch", tally.disagree, tally.agree, tally.with_date_modified),
        ("changed-without-lastmod", tally.changed_without_lastmod, tally.both, tally.changed),
        ("lastmod-without-change", tally.lastmod_without_change, tally.both, tally.advanced),
    )
    for code, against, good, trials in checks:
        interval = wilson(good, trials, z)
        if against >= MIN_CONTRARY and interval is not None and interval[1] < TRUST_BAR:
            found.append((code, against, good, trials))
    return found


def shared_state(flag_codes: set[str], evidence: SegmentEvidence) -> str | None:
    """What a ``shared-timestamp`` flag means here, or None when there is none.

    ``generation``: the value is the generation moment or moved together (the analyser's
    generation-time flag, from the values or from their movement since the previous
    walk); ``contradicted``: the pages carrying it show contrary evidence; otherwise a
    note: ``confirmed`` once :data:`MIN_SHARED_CHECKED` of those pages agree with a
    credible date, ``pending`` before.
    """
    if "shared-timestamp" not in flag_codes:
        return None
    if "generation-time" in flag_codes:
        return "generation"
    shared = evidence.shared or Tally()
    if contrary_counts(shared):
        return "contradicted"
    if shared.agree + shared.last_modified_agree >= MIN_SHARED_CHECKED:
        return "confirmed"
    return "pending"

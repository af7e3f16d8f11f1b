"""The verdict rules: from flags and tallies to a verdict per sub-sitemap and per site.

trusted only from independent evidence whose Wilson 95% lower bound clears the
bar with enough observations; untrusted when the evidence shows lastmod does
not track change; never trusted from a tidy distribution alone.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from auditor.dispersion import Flag, SegmentDispersion
from auditor.result import Reason, SegmentVerdict
from auditor.scorer.stats import change_rate, wilson
from auditor.scorer.tally import Tally

__all__ = ["judge_segment", "judge_site", "pooled_trust", "recheck_days"]

#: Agreement must have a Wilson 95% lower bound at least this high to earn trust
#: (DESIGN.md: "e.g. Wilson 95% lower bound of agreement >= 0.8").
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
MIN_CONTRARY = 2
#: Flags from the analyser that show lastmod does not track change.
_UNTRUSTING_FLAGS = ("generation-time", "shared-timestamp")
#: Flags reported beside a verdict without deciding it.
_NOTED_FLAGS = ("future-lastmod", "invalid-lastmod")
#: Re-verification interval bounds and the interval with nothing to go on.
MIN_RECHECK_DAYS = 1.0
MAX_RECHECK_DAYS = 30.0
DEFAULT_RECHECK_DAYS = 7.0


def judge_segment(segment: SegmentDispersion, tally: Tally) -> SegmentVerdict:
    """The verdict on one sub-sitemap from its own flags and evidence."""
    name = segment.sitemap
    flags = {f.code: f for f in segment.flags}
    reasons = [_flag_reason(flags[c], name) for c in _NOTED_FLAGS if c in flags]
    if tally.render_time:
        reasons.append(_render_time_reason(tally, name))
    if "no-lastmod" in flags:
        verdict = "no-lastmod"
        reasons.insert(0, _flag_reason(flags["no-lastmod"], name))
    else:
        contrary = [_flag_reason(flags[c], name) for c in _UNTRUSTING_FLAGS if c in flags]
        contrary += _contrary_evidence(tally, name)
        trust = _trust(tally)
        if contrary:
            verdict, reasons = "untrusted", contrary + reasons
        elif trust is not None:
            verdict = "trusted"
        else:
            verdict = "inconclusive"
            reasons.insert(0, _unverified(tally, name))
    return _verdict(segment, tally, verdict, reasons)


def pooled_trust(tallies: Sequence[Tally]) -> str | None:
    """What earns trust when the evidence of several clean sub-sitemaps is pooled."""
    pooled = Tally()
    for tally in tallies:
        pooled.add(tally)
    if _contrary_evidence(pooled, None):
        return None
    return _trust(pooled)


def judge_site(segments: Sequence[SegmentVerdict]) -> str:
    """The site's verdict from its sub-sitemaps' (those with URLs)."""
    verdicts = [s.verdict for s in segments if s.urls]
    if not verdicts:
        return "inconclusive"
    if all(v == "no-lastmod" for v in verdicts):
        return "no-lastmod"
    trusted = verdicts.count("trusted")
    bad = sum(v in ("untrusted", "no-lastmod") for v in verdicts)
    if trusted == len(verdicts):
        return "trusted"
    if trusted:
        return "partial"
    return "untrusted" if bad else "inconclusive"


def recheck_days(tally: Tally) -> float | None:
    """Days until a re-verification can expect :data:`MIN_CHANGES` changes in the panel."""
    if not tally.compared or not tally.interval_days:
        return None
    interval = statistics.fmean(tally.interval_days)
    rate = change_rate(tally.compared, tally.changed, interval)
    if not rate:
        return min(MAX_RECHECK_DAYS, max(MIN_RECHECK_DAYS, 2 * interval))  # back off
    needed = min(MIN_CHANGES, tally.compared - 1) / tally.compared
    days = -math.log(1 - needed) / rate
    return min(MAX_RECHECK_DAYS, max(MIN_RECHECK_DAYS, days))


def _trust(tally: Tally) -> str | None:
    """The route that earns trust, or None."""
    dated = tally.with_date_modified + tally.with_last_modified  # Last-Modified as backup
    if dated >= MIN_DATE_COMPARISONS:
        low = wilson(tally.agree + tally.last_modified_agree, dated)
        if low is not None and low[0] >= TRUST_BAR:
            return "date-modified"
    if tally.compared >= MIN_PANEL and tally.changed >= MIN_CHANGES:
        low = wilson(tally.consistent, tally.compared)
        if low is not None and low[0] >= TRUST_BAR:
            return "changes"
    return None


def _contrary_evidence(tally: Tally, segment: str | None) -> list[Reason]:
    reasons = []
    checks = (
        ("date-modified-mismatch", tally.disagree, tally.agree, tally.with_date_modified),
        ("changed-without-lastmod", tally.changed_without_lastmod, tally.both, tally.changed),
        ("lastmod-without-change", tally.lastmod_without_change, tally.both, tally.advanced),
    )
    for code, against, good, trials in checks:
        interval = wilson(good, trials)
        if against >= MIN_CONTRARY and interval is not None and interval[1] < TRUST_BAR:
            reasons.append(Reason(code, _contrary_detail(code, against, good, trials), segment))
    return reasons


def _contrary_detail(code: str, against: int, good: int, trials: int) -> str:
    high = wilson(good, trials)[1]  # type: ignore[index]
    what = {
        "date-modified-mismatch": "sampled pages' credible dateModified disagree with lastmod",
        "changed-without-lastmod": "panel pages changed while their lastmod did not move",
        "lastmod-without-change": "panel pages' lastmod moved while their content did not change",
    }[code]
    return f"{against} of {trials} {what} (agreement at most {high:.2f} at 95%, bar {TRUST_BAR})"


def _unverified(tally: Tally, segment: str) -> Reason:
    return Reason(
        "unverified",
        f"{tally.with_date_modified} comparisons with a credible dateModified and "
        f"{tally.with_last_modified} with a credible Last-Modified (need "
        f"{MIN_DATE_COMPARISONS}+ with a 95% lower bound of {TRUST_BAR}); {tally.compared} "
        f"panel pages compared across runs with {tally.changed} changes (need {MIN_PANEL}+ "
        f"and {MIN_CHANGES}+ changes)",
        segment,
    )


def _render_time_reason(tally: Tally, segment: str) -> Reason:
    return Reason(
        "render-time-date-modified",
        f"{tally.render_time} sampled pages carry a dateModified that vouches for nothing "
        "(the moment of rendering, or one value on every page)",
        segment,
    )


def _flag_reason(flag: Flag, segment: str) -> Reason:
    return Reason(
        flag.code, f"{flag.detail} (figure {flag.figure:.2f}, threshold {flag.threshold})", segment
    )


def _verdict(
    segment: SegmentDispersion, tally: Tally, verdict: str, reasons: list[Reason]
) -> SegmentVerdict:
    interval = statistics.fmean(tally.interval_days) if tally.interval_days else 0.0
    return SegmentVerdict(
        sitemap=segment.sitemap,
        urls=segment.figures.urls,
        verdict=verdict,
        reasons=tuple(reasons),
        agree=tally.agree,
        disagree=tally.disagree,
        compared=tally.compared,
        changed=tally.changed,
        lastmod_advanced=tally.advanced,
        change_rate=change_rate(tally.compared, tally.changed, interval),
        recheck_days=recheck_days(tally),
    )

"""The verdict rules: from flags and evidence to a verdict per sub-sitemap and per site.

trusted only from independent evidence (this run's pooled with recent runs') whose
Wilson 95% lower bound clears the bar with enough observations; untrusted when the
flags or the evidence show lastmod does not track change, contrary evidence of this
run counting on its own; never trusted from a tidy distribution alone.

Touches: nothing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import replace

from auditor.dispersion import SegmentDispersion
from auditor.scorer import reasons as words
from auditor.scorer.doubt import Z_STOP
from auditor.scorer.result import Reason, SegmentVerdict, WindowFigures
from auditor.scorer.rules import (
    CONTRARY_CODES,
    MIN_CHANGES,
    TRUST_BAR,
    contrary_counts,
    shared_state,
    trust_route,
)
from auditor.scorer.stats import change_rate, wilson
from auditor.scorer.tally import Tally
from auditor.scorer.window import SegmentEvidence

__all__ = [
    "DEFAULT_RECHECK_DAYS",
    "TRUST_BAR",
    "group_reasons",
    "judge_segment",
    "judge_site",
    "near_bar_notes",
    "pooled_trust",
    "recheck_days",
]

#: Flags reported beside a verdict without deciding it.
_NOTED_FLAGS = ("future-lastmod", "invalid-lastmod")
_CONFIRM = (
    "short of the 99% needed to overturn trust earned before: still trusted, to be"
    " confirmed by the next run"
)
#: Re-verification interval bounds and the interval with nothing to go on.
MIN_RECHECK_DAYS = 1.0
MAX_RECHECK_DAYS = 30.0
DEFAULT_RECHECK_DAYS = 7.0


def judge_segment(
    segment: SegmentDispersion, evidence: SegmentEvidence, previous: str | None = None
) -> SegmentVerdict:
    """The verdict on one segment from its own flags and evidence (``previous``: its
    verdict on the previous run, which a trusted segment keeps against contrary evidence
    that does not hold at 99%: :data:`~auditor.scorer.doubt.Z_STOP`)."""
    name = segment.sitemap
    flags = {f.code: f for f in segment.flags}
    notes = [words.flag_reason(flags[c], name) for c in _NOTED_FLAGS if c in flags]
    if evidence.own.render_time:
        notes.append(words.render_time_reason(evidence.own, name))
    if "no-lastmod" in flags:
        no_lastmod = words.flag_reason(flags["no-lastmod"], name)
        return _verdict(segment, evidence, "no-lastmod", [no_lastmod, *notes])
    against = []
    if "generation-time" in flags:
        against.append(words.flag_reason(flags["generation-time"], name))
    shared = shared_state(set(flags), evidence)
    if shared is not None:
        reason = words.shared_reason(flags["shared-timestamp"], shared, evidence, name)
        (against if shared in ("generation", "contradicted") else notes).append(reason)
    contrary = contrary_reasons(evidence, name)
    if contrary and not against and previous == "trusted" and not _holds_firmly(evidence):
        return _confirming(segment, evidence, contrary + notes)
    against += contrary
    if against:
        return _verdict(segment, evidence, "untrusted", against + notes)
    if trust_route(evidence.pooled) is not None and shared != "pending":
        return _verdict(segment, evidence, "trusted", notes)
    unverified = words.unverified_reason(evidence, shared == "pending", name)
    if previous == "trusted":
        return _kept(segment, evidence, unverified, notes)
    return _verdict(segment, evidence, "inconclusive", [unverified, *notes])


def _kept(
    segment: SegmentDispersion, evidence: SegmentEvidence, unverified: Reason, notes: list[Reason]
) -> SegmentVerdict:
    """A segment trusted on the previous run, with nothing in this run against it, whose
    evidence falls short of earning trust anew: still trusted (``trust-kept``, with what
    it lacked), re-checked within :data:`DEFAULT_RECHECK_DAYS`.

    Trust earned on evidence is lost on evidence, not on the draw: which 15 of a few
    hundred pages a run reads decides whether one page whose date is a day off takes the
    Wilson bound of 16 agreeing pages under the bar, or whether a group's few pages
    reach the minimum; neither says lastmod got worse. A real Hugo site trusted on every
    first run was inconclusive on 3 of 5 second runs that way. Contrary evidence still
    turns it (at 99%: :func:`_confirming`), and so do the lastmod values' own flags.
    """
    detail = (
        f"trusted on the previous run and nothing in this run contradicts it; {unverified.detail}"
    )
    reason = Reason("trust-kept", detail, unverified.segment)
    verdict = _verdict(segment, evidence, "trusted", [reason, *notes])
    recheck = min(verdict.recheck_days or DEFAULT_RECHECK_DAYS, DEFAULT_RECHECK_DAYS)
    return replace(verdict, recheck_days=recheck)


def _holds_firmly(evidence: SegmentEvidence) -> bool:
    """Contrary evidence that holds at 99%, in this run or over the window."""
    return any(contrary_counts(t, Z_STOP) for t in (evidence.own, evidence.pooled))


def _confirming(
    segment: SegmentDispersion, evidence: SegmentEvidence, reasons: list[Reason]
) -> SegmentVerdict:
    """A trusted segment whose contrary evidence is short of overturning trust: still
    trusted, the evidence named, and re-checked at the soonest (hysteresis: a verdict
    turns only on evidence beyond the sample's noise)."""
    marked = [
        replace(r, detail=f"{r.detail}; {_CONFIRM}") if r.code in CONTRARY_CODES else r
        for r in reasons
    ]
    verdict = _verdict(segment, evidence, "trusted", marked)
    return replace(verdict, recheck_days=MIN_RECHECK_DAYS)


def _of_group(segment: SegmentDispersion, reason: Reason) -> Reason:
    """A group's reason says which of its file's URLs it speaks of."""
    if segment.group is None:
        return reason
    group = segment.group
    return replace(reason, detail=f"{group.urls} URLs matching {group.pattern}: {reason.detail}")


def contrary_reasons(evidence: SegmentEvidence, segment: str) -> list[Reason]:
    """Contrary evidence of this run, then that of the window not already seen in it."""
    found = words.contrary_reasons(evidence.own, segment, words.scope(1))
    if evidence.runs > 1:
        seen = {r.code for r in found}
        pooled = words.contrary_reasons(evidence.pooled, segment, words.scope(evidence.runs))
        found += [r for r in pooled if r.code not in seen]
    return found


def pooled_trust(tallies: Sequence[Tally]) -> str | None:
    """What earns trust when the evidence of several clean sub-sitemaps is pooled."""
    pooled = Tally()
    for tally in tallies:
        pooled.add(tally)
    if contrary_counts(pooled):
        return None
    return trust_route(pooled)


def judge_site(segments: Sequence[SegmentVerdict]) -> str:
    """The site's verdict from its segments' (those with URLs; a leftover group too
    small to speak for its file counts only when nothing else does)."""
    verdicts = [s.verdict for s in segments if s.urls and s.material]
    verdicts = verdicts or [s.verdict for s in segments if s.urls]
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


def group_reasons(segments: Sequence[SegmentVerdict]) -> list[Reason]:
    """For each file split into groups whose material groups' verdicts differ, one
    reason naming which groups its lastmod can be trusted for and which not."""
    by_file: dict[str, list[SegmentVerdict]] = {}
    for segment in segments:
        if segment.group is not None and segment.material and segment.urls:
            by_file.setdefault(segment.sitemap, []).append(segment)
    reasons = []
    for sitemap, groups in by_file.items():
        if len({g.verdict for g in groups}) < 2:
            continue
        trusted = [_pattern(g) for g in groups if g.verdict == "trusted"]
        others = [
            f"{_pattern(g)} ({g.verdict}, {g.urls} URLs{_why(g)})"
            for g in groups
            if g.verdict != "trusted"
        ]
        head = f"trusted for {', '.join(trusted)}, not for " if trusted else "its groups differ: "
        reasons.append(Reason("groups-differ", head + "; ".join(others), sitemap))
    return reasons


#: A trusted segment whose 95% lower bound clears the bar by less than this is noted as
#: near it: one or two disagreeing pages on the next run would undo its trust.
NEAR_BAR = 0.05


def near_bar_notes(segments: Sequence[SegmentVerdict]) -> list[Reason]:
    """A note for each trusted segment whose evidence clears the bar only just: the
    bound and the bar, so a reader knows the verdict rests on little margin."""
    notes = []
    for segment in segments:
        window = segment.window
        if segment.verdict != "trusted" or window is None:
            continue
        lows = [b for b in (window.date_agreement_low, window.change_agreement_low) if b]
        cleared = [b for b in lows if b >= TRUST_BAR]
        if cleared and max(cleared) < TRUST_BAR + NEAR_BAR:
            where = f" ({segment.group.pattern})" if segment.group else ""
            detail = (
                f"trusted{where} at a 95% lower bound of {max(cleared):.2f}, bar {TRUST_BAR}:"
                " a disagreeing page or two on the next run would undo it"
            )
            notes.append(Reason("near-bar", detail, segment.sitemap))
    return notes


def _pattern(segment: SegmentVerdict) -> str:
    return segment.group.pattern if segment.group else segment.sitemap


def _why(segment: SegmentVerdict) -> str:
    codes = list(dict.fromkeys(r.code for r in segment.reasons))
    return f": {', '.join(codes)}" if codes else ""


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


def window_figures(evidence: SegmentEvidence) -> WindowFigures:
    """The pooled figures a sub-sitemap's verdict weighed."""
    pooled = evidence.pooled
    dated = pooled.with_date_modified + pooled.with_last_modified
    date_low = wilson(pooled.agree + pooled.last_modified_agree, dated)
    change_low = wilson(pooled.consistent, pooled.compared)
    return WindowFigures(
        runs=evidence.runs,
        with_date_modified=pooled.with_date_modified,
        agree=pooled.agree,
        disagree=pooled.disagree,
        with_last_modified=pooled.with_last_modified,
        last_modified_agree=pooled.last_modified_agree,
        compared=pooled.compared,
        changed=pooled.changed,
        consistent=pooled.consistent,
        date_agreement_low=date_low[0] if date_low else None,
        change_agreement_low=change_low[0] if change_low else None,
    )


def _verdict(
    segment: SegmentDispersion, evidence: SegmentEvidence, verdict: str, reasons: list[Reason]
) -> SegmentVerdict:
    tally = evidence.own
    interval = statistics.fmean(tally.interval_days) if tally.interval_days else 0.0
    return SegmentVerdict(
        sitemap=segment.sitemap,
        group=segment.group,
        material=segment.material,
        urls=segment.figures.urls,
        verdict=verdict,
        reasons=tuple(_of_group(segment, r) for r in reasons),
        agree=tally.agree,
        disagree=tally.disagree,
        compared=tally.compared,
        changed=tally.changed,
        lastmod_advanced=tally.advanced,
        change_rate=change_rate(tally.compared, tally.changed, interval),
        recheck_days=recheck_days(tally),
        requested=tally.requested,
        window=window_figures(evidence),
        precision=tally.precision,
        recall=tally.recall,
    )

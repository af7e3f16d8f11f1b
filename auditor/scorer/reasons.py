"""The words of a verdict: each reason names its real cause and the figure that decided it.

Touches: nothing.
"""

from __future__ import annotations

from auditor.dispersion import Flag
from auditor.scorer.result import Reason
from auditor.scorer.rules import (
    MIN_CHANGES,
    MIN_DATE_COMPARISONS,
    MIN_PANEL,
    MIN_SHARED_CHECKED,
    TRUST_BAR,
    contrary_counts,
    dates_prove_nothing,
)
from auditor.scorer.stats import agreeing_needed, wilson
from auditor.scorer.tally import Tally
from auditor.scorer.window import SegmentEvidence

__all__ = [
    "contrary_reasons",
    "flag_reason",
    "render_time_reason",
    "scope",
    "shared_reason",
    "unverified_reason",
]

_CONTRARY_WHAT = {
    "date-modified-mismatch": "sampled pages' credible dateModified disagree with lastmod",
    "changed-without-lastmod": "panel pages changed while their lastmod did not move",
    "lastmod-without-change": "panel pages' lastmod moved while their content did not change",
}


def scope(runs: int) -> str:
    """Where the figures come from: this run, or the window of recent runs."""
    return "in this run" if runs <= 1 else f"over the last {runs} runs"


def flag_reason(flag: Flag, segment: str, note: str = "") -> Reason:
    """A dispersion flag as a reason, with its figure and threshold (and ``note``)."""
    detail = f"{flag.detail} (figure {flag.figure:.2f}, threshold {flag.threshold})"
    return Reason(flag.code, f"{detail}; {note}" if note else detail, segment)


def contrary_reasons(tally: Tally, segment: str | None, where: str) -> list[Reason]:
    """Contrary evidence in numbers: how many pages, of how many, and the upper bound."""
    reasons = []
    for code, against, good, trials in contrary_counts(tally):
        high = wilson(good, trials)[1]  # type: ignore[index]
        detail = (
            f"{against} of {trials} {_CONTRARY_WHAT[code]} {where} "
            f"(agreement at most {high:.2f} at 95%, bar {TRUST_BAR})"
        )
        reasons.append(Reason(code, detail, segment))
    return reasons


def render_time_reason(tally: Tally, segment: str) -> Reason:
    """Pages whose dateModified vouches for nothing."""
    return Reason(
        "render-time-date-modified",
        f"{tally.render_time} sampled pages carry a dateModified that vouches for nothing "
        "(the moment of rendering, or one value on every page)",
        segment,
    )


def shared_reason(flag: Flag, state: str, evidence: SegmentEvidence, segment: str) -> Reason:
    """A shared lastmod value, and whether it condemns (``state``: rules.shared_state)."""
    if state == "generation":
        note = "it condemns: the values are the generation moment or moved together"
    elif state == "contradicted":
        first = contrary_reasons(evidence.shared or Tally(), segment, "among them")[0]
        note = f"it condemns: the pages carrying it contradict it: {first.detail}"
    else:
        checked = shared_checked(evidence)
        note = (
            "a note, not a verdict: not the generation moment, not moved together, and "
            f"{checked} of the pages carrying it agree with a credible date"
        )
        if state == "pending":
            note += f" (trust needs {MIN_SHARED_CHECKED}+)"
    return flag_reason(flag, segment, note)


def shared_checked(evidence: SegmentEvidence) -> int:
    """Pages carrying the shared value whose credible date agrees with it."""
    shared = evidence.shared or Tally()
    return shared.agree + shared.last_modified_agree


def unverified_reason(evidence: SegmentEvidence, shared_pending: bool, segment: str) -> Reason:
    """Why trust is not earned yet: each route's real blocker, with its figure."""
    where = "" if evidence.runs <= 1 else f" {scope(evidence.runs)}"
    parts = []
    if shared_pending:
        parts.append(
            f"{shared_checked(evidence)} of the pages carrying the shared value checked against "
            f"a credible date, need {MIN_SHARED_CHECKED}+"
        )
    parts.append(_date_route(evidence.pooled, where))
    parts.append(_change_route(evidence.pooled, where, evidence.has_previous))
    return Reason("unverified", "; ".join(parts), segment)


def _date_route(tally: Tally, where: str) -> str:
    dated = tally.with_date_modified + tally.with_last_modified
    good = tally.agree + tally.last_modified_agree
    if dated == 0:
        return "no sampled page carries a credible dateModified or Last-Modified"
    low = wilson(good, dated)[0]  # type: ignore[index]
    text = f"{good} of {dated} credible dateModified/Last-Modified agree with lastmod{where}"
    if dates_prove_nothing(tally):
        return (
            f"{text}, but {tally.published_agree} of them state the page's publication date"
            " as its dateModified: dates that were never updated agree with any lastmod that"
            " repeats them, so trust needs changes observed across runs"
        )
    if low >= TRUST_BAR and dated >= MIN_DATE_COMPARISONS:
        return f"{text}: 95% lower bound {low:.2f}, clears the bar {TRUST_BAR}"
    if low >= TRUST_BAR:
        return f"{text}: need {MIN_DATE_COMPARISONS}+ comparisons"
    more = agreeing_needed(good, dated, TRUST_BAR)
    text += f": 95% lower bound {low:.2f}, under the bar {TRUST_BAR}"
    return text + (f" ({more} more agreeing would clear it)" if more else "")


def _change_route(tally: Tally, where: str, has_previous: bool) -> str:
    compared, changed = tally.compared, tally.changed
    if compared == 0:
        if not has_previous:
            return "no earlier run to compare pages with yet"
        return "no panel page compared across runs"
    text = f"{compared} panel pages compared across runs{where}"
    if compared < MIN_PANEL:
        return f"{text}, need {MIN_PANEL}+"
    if changed < MIN_CHANGES:
        return (
            f"{text}, {changed} changed: need {MIN_CHANGES}+ changes before unchanged pages "
            "prove anything"
        )
    low = wilson(tally.consistent, compared)[0]  # type: ignore[index]
    return (
        f"lastmod told the truth on {tally.consistent} of {compared} panel pages compared "
        f"across runs{where} ({tally.changed_without_lastmod} changed while lastmod stayed, "
        f"{tally.lastmod_without_change} lastmod moved without change): 95% lower bound "
        f"{low:.2f}, under the bar {TRUST_BAR}"
    )

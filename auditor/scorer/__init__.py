"""Scorer: dispersion flags, page evidence and recent runs' pages to a verdict.

Pure: no network, no database. The audit pipeline gathers the inputs and saves
the :class:`~auditor.scorer.result.AuditResult` it returns; while it samples, it asks
:func:`sampling_status` which sub-sitemaps are decided already.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from auditor.dispersion import DispersionReport
from auditor.scorer.changes import template_notes
from auditor.scorer.doubt import segment_status
from auditor.scorer.result import (
    AuditResult,
    ChangeFigures,
    CrawlFigures,
    PageObservation,
    Reason,
    SampleFigures,
    SegmentVerdict,
)
from auditor.scorer.stats import wilson
from auditor.scorer.tally import Tally, crawl_tally
from auditor.scorer.verdict import (
    DEFAULT_RECHECK_DAYS,
    group_reasons,
    judge_segment,
    judge_site,
    near_bar_notes,
    pooled_trust,
    recheck_days,
)
from auditor.scorer.walls import blocked_reason, condemned_without_pages, stopped_by_walls, walled
from auditor.scorer.window import (
    PageFilter,
    PastRun,
    SegmentEvidence,
    changes_only,
    count_checks,
    gather_evidence,
)

if TYPE_CHECKING:
    from auditor.history.crawlcounts import CrawlLogCounts

__all__ = ["PastRun", "ScoreInputs", "sampling_status", "score"]


@dataclass(frozen=True)
class ScoreInputs:
    """Everything the scorer reads."""

    site: str
    started_at: datetime
    inventory: dict[str, int]
    readable: bool
    dispersion: DispersionReport
    pages: Sequence[PageObservation]
    previous_pages: Sequence[PageObservation] = ()
    previous_verdict: str | None = None
    #: The runs before this one, newest first (the first is the previous run, whose
    #: pages are ``previous_pages``): the window of evidence the verdicts weigh.
    past_runs: Sequence[PastRun] = ()
    #: What the team's crawler's fetches showed of lastmod: since the previous run
    #: (counted as this run's evidence, at no request of the audit's), and before it
    #: within the window (pooled evidence only); per sub-sitemap, and URL by URL for the
    #: files split into groups, each group taking its URLs' counts (:func:`_keyed`).
    crawled: CrawlLogCounts | None = None
    crawled_earlier: CrawlLogCounts | None = None
    #: Each segment's verdict on the previous run, by segment key (a group new in this
    #: run takes its file's).
    previous_segments: Mapping[str, str] = field(default_factory=dict)
    #: This run's bot walls: how many pages each kind answered (``Cloudflare challenge
    #: page (HTTP 403)``: 12), for the ``blocked`` reason.
    walls: Mapping[str, int] = field(default_factory=dict)


def score(inputs: ScoreInputs) -> AuditResult:
    """The verdict on a site and on each of its segments (sub-sitemaps, or groups within
    one), with reasons and figures."""
    notes = template_notes(inputs.pages, inputs.previous_pages)
    inputs = _keyed(inputs)
    segments, evidence = _judge(inputs)
    segments = _with_crawl_figures(segments, inputs)
    site = Tally()
    for item in evidence.values():
        site.add(item.own)
    verdict = judge_site(segments) if inputs.readable else "inconclusive"
    reasons = _site_reasons(inputs, segments) + group_reasons(segments)
    if inputs.readable and walled(site):
        reasons.insert(0, blocked_reason(site, inputs.walls))
        if not condemned_without_pages(segments):
            verdict = "inconclusive"
    return AuditResult(
        site=inputs.site,
        started_at=inputs.started_at,
        verdict=verdict,
        reasons=tuple(reasons),
        inventory=dict(inputs.inventory),
        dispersion=_dispersion_dict(inputs.dispersion),
        sample=_sample_figures(site),
        changes=(
            _change_figures(site, _crawl_part(evidence, inputs.crawled))
            if inputs.previous_pages or inputs.crawled
            else None
        ),
        segments=tuple(segments),
        previous_verdict=inputs.previous_verdict,
        recheck_days=_site_recheck(segments, site),
        notes=(*notes, *near_bar_notes(segments)),
        crawl_batches=_crawl_batches(inputs),
    )


def _crawl_batches(inputs: ScoreInputs) -> tuple[int, ...]:
    """The crawl batches the crawler's counts weighed came from, by id."""
    found = {
        b for c in (inputs.crawled, inputs.crawled_earlier) if c is not None for b in c.batches
    }
    return tuple(sorted(found))


def sampling_status(inputs: ScoreInputs) -> dict[str, str]:
    """Each sub-sitemap's sampling status on the pages fetched so far (``inputs.pages``):
    ``condemned`` by its lastmod values alone, ``decided`` by its evidence, or ``open``."""
    segments, evidence = _judge(_keyed(inputs))
    site = Tally()
    for item in evidence.values():
        site.add(item.own)
    if stopped_by_walls(site):
        return {v.key: "decided" for v in segments}
    by_key = {s.key: s for s in inputs.dispersion.segments}
    return {v.key: segment_status(v, by_key[v.key], evidence[v.key]) for v in segments}


def _keyed(inputs: ScoreInputs) -> ScoreInputs:
    """The inputs with every page's ``sitemap`` replaced by its segment key (past runs'
    pages labelled by today's groups), and the crawler's counts keyed by today's segments:
    the URLs of a file read URL by URL each counted in their group, as pages are
    (:meth:`~auditor.history.crawlcounts.CrawlLogCounts.attributed`)."""
    segmenter = inputs.dispersion.segmenter

    def attributed(counts: CrawlLogCounts | None) -> CrawlLogCounts | None:
        return counts.attributed(segmenter) if counts is not None else None

    inputs = replace(
        inputs,
        crawled=attributed(inputs.crawled),
        crawled_earlier=attributed(inputs.crawled_earlier),
    )
    if not segmenter.groupings:
        return inputs

    def keyed(pages: Sequence[PageObservation]) -> tuple[PageObservation, ...]:
        keys = segmenter.keys([p.sitemap for p in pages], [p.loc for p in pages])
        return tuple(replace(p, sitemap=k) for p, k in zip(pages, keys, strict=True))

    return replace(
        inputs,
        pages=keyed(inputs.pages),
        previous_pages=keyed(inputs.previous_pages),
        past_runs=tuple(replace(r, pages=keyed(r.pages)) for r in inputs.past_runs),
    )


def _judge(inputs: ScoreInputs) -> tuple[list[SegmentVerdict], dict[str, SegmentEvidence]]:
    """Every sub-sitemap's verdict, and the evidence each was judged on."""
    evidence = _evidence(inputs)
    before = inputs.previous_segments
    segments = [
        judge_segment(s, evidence[s.key], before.get(s.key, before.get(s.sitemap)))
        for s in inputs.dispersion.segments
        if s.figures.urls
    ]
    return _lift_by_pooled_evidence(segments, evidence), evidence


def _evidence(inputs: ScoreInputs) -> dict[str, SegmentEvidence]:
    """Own and pooled evidence of every sub-sitemap with URLs (empty when not sampled)."""
    args = (inputs.pages, inputs.previous_pages, inputs.past_runs, inputs.started_at)
    found = gather_evidence(*args)
    evidence = {
        s.key: found.get(s.key, SegmentEvidence(has_previous=bool(inputs.previous_pages)))
        for s in inputs.dispersion.segments
        if s.figures.urls
    }
    count_checks(evidence, inputs.pages, inputs.previous_pages)
    _add_crawled(evidence, inputs.crawled, own=True)
    _add_crawled(evidence, inputs.crawled_earlier, own=False)
    for segment in inputs.dispersion.segments:
        value = segment.figures.top_value
        if segment.key not in evidence or value is None:
            continue
        if any(f.code == "shared-timestamp" for f in segment.flags):
            name = segment.key
            carrying = gather_evidence(*args, keep=_carrying(name, value))
            evidence[name].shared = carrying[name].pooled if name in carrying else Tally()
    return evidence


def _add_crawled(
    evidence: dict[str, SegmentEvidence], crawled: CrawlLogCounts | None, *, own: bool
) -> None:
    """The crawler's fetches as evidence: their across-fetches comparisons and credible
    dateModified checks count as the panel's do (``own``: as this run's too), each
    segment's (a group's included) its own, once :func:`_keyed` attributed them."""
    for name, counts in crawled.keyed.items() if crawled is not None else ():
        if name not in evidence or not counts.evidence:
            continue
        tally = crawl_tally(counts)
        evidence[name].pooled.add(tally)
        if own:
            evidence[name].own.add(tally)
            evidence[name].has_previous = True


def _with_crawl_figures(
    segments: list[SegmentVerdict], inputs: ScoreInputs
) -> list[SegmentVerdict]:
    """Each segment with the crawler's counts :func:`_add_crawled` weighed, to be shown."""

    def of(crawled: CrawlLogCounts | None, key: str) -> CrawlFigures | None:
        c = crawled.keyed.get(key) if crawled is not None else None
        if c is None or not c.shown:
            return None
        return CrawlFigures(
            c.compared, c.changed, c.advanced, c.both, c.dated, c.agree, pending=c.pending
        )

    return [
        replace(
            s, crawled=of(inputs.crawled, s.key), crawled_earlier=of(inputs.crawled_earlier, s.key)
        )
        for s in segments
    ]


def _carrying(sitemap: str, lastmod: datetime) -> PageFilter:
    """Accepts the pages of ``sitemap`` whose lastmod is ``lastmod``."""
    return lambda page: page.sitemap == sitemap and page.lastmod == lastmod


def _lift_by_pooled_evidence(
    segments: list[SegmentVerdict], evidence: dict[str, SegmentEvidence]
) -> list[SegmentVerdict]:
    """Segments too small to earn trust alone share the evidence of clean ones.

    - Sub-sitemaps: when the evidence pooled over every segment without contrary findings
      earns trust, each sub-sitemap that was sampled and only lacked evidence becomes
      trusted (not one whose shared lastmod value still waits for its own pages' dates).
    - Groups of one split file: they pool only their *across-runs change* evidence, with
      their clean siblings of the same file (:func:`_file_change_trust`): a page whose
      content changed when lastmod said so is evidence about the file's generator, whatever
      its URL shape. Dates stay per group: one group's agreeing dates say nothing of a tag
      group that carries none. A group is lifted only when it has change evidence of its
      own; a group with contrary evidence is untrusted already, and judged on it.
    """
    clean = [s for s in segments if s.verdict in ("trusted", "inconclusive")]
    route = pooled_trust([evidence[s.key].pooled for s in clean])
    by_file = _file_change_trust(clean, evidence)
    lifted = []
    for segment in segments:
        own = evidence[segment.key]
        pending = any(r.code == "shared-timestamp" for r in segment.reasons)
        if segment.verdict != "inconclusive" or pending or not own.own.fetched:
            lifted.append(segment)
            continue
        if segment.group is None:
            lift = route is not None
        else:
            lift = segment.material and by_file.get(segment.sitemap, False)
            lift = lift and own.pooled.compared > 0
        if lift:
            kept = tuple(r for r in segment.reasons if r.code != "unverified")
            segment = replace(segment, verdict="trusted", reasons=kept)
        lifted.append(segment)
    return lifted


def _file_change_trust(
    clean: list[SegmentVerdict], evidence: dict[str, SegmentEvidence]
) -> dict[str, bool]:
    """For each file split into groups, whether its clean material groups' across-runs
    change evidence, pooled, earns trust (and shows nothing contrary). The leftover group
    under the material share (a home page, a few odd URLs) neither lifts nor sinks its
    file: it is judged on its own, as it decides no site verdict."""
    by_file: dict[str, Tally] = {}
    for segment in clean:
        if segment.group is not None and segment.material:
            by_file.setdefault(segment.sitemap, Tally()).add(
                changes_only(evidence[segment.key].pooled)
            )
    return {name: pooled_trust([tally]) == "changes" for name, tally in by_file.items()}


def _site_reasons(inputs: ScoreInputs, segments: list[SegmentVerdict]) -> list[Reason]:
    if not inputs.readable:
        return [Reason("sitemap-unreadable", "no sitemap could be read")]
    reasons = [r for s in segments if s.verdict != "trusted" for r in s.reasons]
    reasons += [r for s in segments if s.verdict == "trusted" for r in s.reasons]
    return reasons


def _sample_figures(site: Tally) -> SampleFigures:
    interval = wilson(site.agree, site.with_date_modified)
    return SampleFigures(
        requested=site.requested,
        fetched=site.fetched,
        with_date_modified=site.with_date_modified,
        agree=site.agree,
        disagree=site.disagree,
        skipped_robots=site.skipped_robots,
        render_time=site.render_time,
        agreement_low=interval[0] if interval else None,
        with_last_modified=site.with_last_modified,
        last_modified_agree=site.last_modified_agree,
        skipped_overloaded=site.skipped_overloaded,
        skipped_time_budget=site.skipped_time_budget,
    )


def _crawl_part(
    evidence: dict[str, SegmentEvidence], crawled: CrawlLogCounts | None
) -> CrawlFigures | None:
    """What the crawler's fetches since the previous run added to this run's figures (the
    counts :func:`_add_crawled` weighed as the run's own), or None when nothing."""
    part = Tally()
    for name, counts in crawled.keyed.items() if crawled is not None else ():
        if name in evidence and counts.evidence:
            part.add(crawl_tally(counts))
    if not (part.compared or part.with_date_modified):
        return None
    return CrawlFigures(
        part.compared, part.changed, part.advanced, part.both, part.with_date_modified, part.agree
    )


def _change_figures(site: Tally, from_crawl: CrawlFigures | None = None) -> ChangeFigures:
    precision = wilson(site.both, site.advanced)
    recall = wilson(site.both, site.changed)
    agreement = wilson(site.consistent, site.compared)
    return ChangeFigures(
        compared=site.compared,
        changed=site.changed,
        lastmod_advanced=site.advanced,
        both=site.both,
        precision=site.precision,
        recall=site.recall,
        precision_interval=precision,
        recall_interval=recall,
        agreement_low=agreement[0] if agreement else None,
        template_only=site.template_only,
        ambiguous=site.ambiguous,
        from_crawl=from_crawl,
    )


def _site_recheck(segments: list[SegmentVerdict], site: Tally) -> float:
    known = [s.recheck_days for s in segments if s.recheck_days is not None]
    if known:
        return min(known)
    return recheck_days(site) or DEFAULT_RECHECK_DAYS


def _dispersion_dict(report: DispersionReport) -> dict[str, object]:
    figures = report.to_dict()
    figures["flags"] = [f.code for f in report.flags]
    return figures

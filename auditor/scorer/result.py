"""What an audit produces and what history keeps: verdicts, reasons, page observations.

:class:`AuditResult` is the ``auditor audit --json`` contract (docs/contract.md).
:class:`PageObservation` is one sampled page as history stores it, and as the
scorer reads it back on the next run to see what changed.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from auditor.dispersion.groups import Group
from auditor.dispersion.segments import segment_key
from auditor.evidence import PageEvidence
from auditor.sampler import SampledPage

__all__ = [
    "MAX_PROBLEMS_KEPT",
    "NOTE_CODES",
    "REASON_CODES",
    "VERDICTS",
    "AuditResult",
    "ChangeFigures",
    "CrawlFigures",
    "PageObservation",
    "Reason",
    "SampleFigures",
    "SegmentVerdict",
    "WindowFigures",
]

#: Walk problems kept in a result (the inventory counts them all).
MAX_PROBLEMS_KEPT = 200
#: Verdicts (contract), from best to worst for scheduling.
VERDICTS = ("trusted", "partial", "untrusted", "no-lastmod", "inconclusive")
#: Reason codes (contract: docs/contract.md, AuditResult).
REASON_CODES = frozenset(
    {
        "no-lastmod",
        "shared-timestamp",
        "generation-time",
        "future-lastmod",
        "invalid-lastmod",
        "date-modified-mismatch",
        "render-time-date-modified",
        "changed-without-lastmod",
        "lastmod-without-change",
        "unverified",
        "sitemap-unreadable",
        "groups-differ",
        "blocked",
        "trust-kept",
    }
)


#: Notes: what a run observed that explains its figures without deciding a verdict.
NOTE_CODES = frozenset({"template-change", "near-bar", "publication-date-right"})


@dataclass(frozen=True)
class Reason:
    """Why a verdict was given, with the figure behind it (also the shape of a note, whose
    code is one of :data:`NOTE_CODES`)."""

    code: str
    detail: str
    segment: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (contract)."""
        return {"code": self.code, "detail": self.detail, "segment": self.segment}


@dataclass(frozen=True)
class WindowFigures:
    """The evidence a sub-sitemap's verdict weighed: this run's pooled with that of the
    recent runs (each page's newest credible-date comparison once; every across-runs
    comparison of every pair of consecutive runs)."""

    runs: int  # runs whose evidence counted, this one included
    with_date_modified: int
    agree: int
    disagree: int
    with_last_modified: int
    last_modified_agree: int
    compared: int
    changed: int
    consistent: int  # compared pages where lastmod told the truth
    date_agreement_low: float | None  # Wilson 95% lower bound, credible dates
    change_agreement_low: float | None  # Wilson 95% lower bound, across runs

    def to_dict(self) -> dict[str, Any]:
        """The JSON object."""
        return {
            "runs": self.runs,
            "with_date_modified": self.with_date_modified,
            "agree": self.agree,
            "disagree": self.disagree,
            "with_last_modified": self.with_last_modified,
            "last_modified_agree": self.last_modified_agree,
            "compared": self.compared,
            "changed": self.changed,
            "consistent": self.consistent,
            "date_agreement_low": _rounded(self.date_agreement_low),
            "change_agreement_low": _rounded(self.change_agreement_low),
        }


@dataclass(frozen=True)
class CrawlFigures:
    """What the team's crawler's fetches (``auditor crawled``) showed of one segment's
    lastmod: fetches compared with the URL's previous good fetch, and credible
    dateModified checks (each URL's newest once). They count in the segment's evidence as
    the panel's comparisons and dates do."""

    compared: int
    changed: int
    lastmod_advanced: int
    both: int
    with_date_modified: int
    agree: int
    #: Fetches compared but waiting for a walk of the sitemaps made after them to be
    #: weighed against lastmod (in none of the figures above).
    pending: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON object."""
        return dict(vars(self))


@dataclass(frozen=True)
class SegmentVerdict:
    """The verdict on one segment, with its own figures: a sub-sitemap, or one ``group``
    of its URLs (its pattern, size and the rule that found it) when the file mixes
    behaviours; ``material`` False for a leftover group too small to speak for the file."""

    sitemap: str
    urls: int
    verdict: str
    reasons: tuple[Reason, ...] = ()
    agree: int = 0
    disagree: int = 0
    compared: int = 0  # panel pages fetched in both runs
    changed: int = 0
    lastmod_advanced: int = 0
    change_rate: float | None = None  # estimated changes per page per day
    recheck_days: float | None = None
    requested: int = 0  # pages of this sub-sitemap asked for in this run
    window: WindowFigures | None = None  # the evidence weighed, recent runs included
    precision: float | None = None  # P(content changed | lastmod advanced), this run's
    recall: float | None = None  # P(lastmod advanced | content changed), this run's
    group: Group | None = None
    material: bool = True
    #: The crawler's fetches counted in this segment's evidence: since the previous run
    #: (in its figures above, as this run's), and before it within the window (pooled).
    crawled: CrawlFigures | None = None
    crawled_earlier: CrawlFigures | None = None

    @property
    def group_pattern(self) -> str | None:
        """The group's pattern, None for a whole sub-sitemap."""
        return self.group.pattern if self.group else None

    @property
    def key(self) -> str:
        """The segment's key (:func:`~auditor.dispersion.segments.segment_key`)."""
        return segment_key(self.sitemap, self.group_pattern)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: the contract's keys first (``group`` only on a group)."""
        group = {"group": {**self.group.to_dict(), "material": self.material}} if self.group else {}
        return {
            "sitemap": self.sitemap,
            **group,
            "urls": self.urls,
            "verdict": self.verdict,
            "reasons": list(dict.fromkeys(r.code for r in self.reasons)),
            "reason_details": [r.to_dict() for r in self.reasons],
            "agree": self.agree,
            "disagree": self.disagree,
            "compared": self.compared,
            "changed": self.changed,
            "lastmod_advanced": self.lastmod_advanced,
            "change_rate": _rounded(self.change_rate),
            "recheck_days": _rounded(self.recheck_days),
            "requested": self.requested,
            "window": self.window.to_dict() if self.window else None,
            "precision": _rounded(self.precision),
            "recall": _rounded(self.recall),
            "crawled": self.crawled.to_dict() if self.crawled else None,
            "crawled_earlier": self.crawled_earlier.to_dict() if self.crawled_earlier else None,
        }


@dataclass(frozen=True)
class SampleFigures:
    """What the sample of this run showed."""

    requested: int
    fetched: int
    with_date_modified: int  # credible ones
    agree: int
    disagree: int
    skipped_robots: int
    render_time: int = 0  # dateModified that vouch for nothing
    agreement_low: float | None = None  # Wilson 95% lower bound of agree / (agree + disagree)
    with_last_modified: int = 0  # pages without dateModified, compared on HTTP Last-Modified
    last_modified_agree: int = 0
    skipped_overloaded: int = 0  # not asked for: the host kept answering 429/503
    skipped_time_budget: int = 0  # not asked for: the sampling time budget was spent

    @property
    def stopped(self) -> str | None:
        """Why sampling stopped before the end (``overloaded``, ``time-budget``), or None."""
        if self.skipped_overloaded:
            return "overloaded"
        return "time-budget" if self.skipped_time_budget else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (contract keys first)."""
        return {
            "requested": self.requested,
            "fetched": self.fetched,
            "with_date_modified": self.with_date_modified,
            "agree": self.agree,
            "disagree": self.disagree,
            "skipped_robots": self.skipped_robots,
            "render_time": self.render_time,
            "agreement_low": _rounded(self.agreement_low),
            "with_last_modified": self.with_last_modified,
            "last_modified_agree": self.last_modified_agree,
            "stopped": self.stopped,
            "skipped_overloaded": self.skipped_overloaded,
            "skipped_time_budget": self.skipped_time_budget,
        }


@dataclass(frozen=True)
class ChangeFigures:
    """Across runs, on the panel pages fetched in both, and on the team's crawler's
    fetches since the previous run (``auditor crawled``): lastmod advanced (L) against
    main content changed (C). Precision is P(C|L), recall P(L|C), each with its Wilson
    95% interval. ``from_crawl`` says how much of it came from the crawl (the rest is the
    panel's); None when the crawl gave nothing."""

    compared: int
    changed: int
    lastmod_advanced: int
    both: int  # L and C
    precision: float | None
    recall: float | None
    precision_interval: tuple[float, float] | None
    recall_interval: tuple[float, float] | None
    agreement_low: float | None  # Wilson lower bound of (L and C, or neither) / compared
    template_only: int = 0  # compared pages whose only differences were the site's template
    #: Pages whose lastmod advanced while only their own template differed: left out of
    #: the comparison, neither for lastmod nor against it.
    ambiguous: int = 0
    from_crawl: CrawlFigures | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (contract keys first)."""
        return {
            "compared": self.compared,
            "changed": self.changed,
            "lastmod_advanced": self.lastmod_advanced,
            "precision": _rounded(self.precision),
            "recall": _rounded(self.recall),
            "both": self.both,
            "precision_interval": _interval(self.precision_interval),
            "recall_interval": _interval(self.recall_interval),
            "agreement_low": _rounded(self.agreement_low),
            "template_only": self.template_only,
            "ambiguous": self.ambiguous,
            "from_crawl": self.from_crawl.to_dict() if self.from_crawl else None,
        }


@dataclass(frozen=True)
class AuditResult:
    """One audit of one site (the ``auditor audit --json`` contract)."""

    site: str
    started_at: datetime
    verdict: str
    reasons: tuple[Reason, ...]
    inventory: dict[str, int]
    dispersion: dict[str, Any]
    sample: SampleFigures
    changes: ChangeFigures | None
    segments: tuple[SegmentVerdict, ...]
    run_id: int | None = None
    report: str | None = None
    previous_verdict: str | None = None
    recheck_days: float | None = None
    finished_at: datetime | None = None
    problems: tuple[dict[str, str], ...] = ()  # the walk's first problems (MAX_PROBLEMS_KEPT)
    notes: tuple[Reason, ...] = ()  # codes from NOTE_CODES: figures explained, no verdict
    #: What scheduling on this verdict saves (:class:`auditor.planner.PlanFigures`):
    #: fetches a day and expected freshness under the plan and under a daily recrawl.
    savings: dict[str, Any] | None = None
    #: The sample's seed (per site and run, from the runs saved before): kept in the
    #: history so that any run's draw can be replayed (``AuditOptions.seed``'s base aside).
    seed: int | None = None
    #: The crawl batches (``auditor crawled`` runs, by id) whose fetches this run weighed
    #: as evidence: the crawl since the previous run and the window before it.
    crawl_batches: tuple[int, ...] = ()

    @property
    def degraded(self) -> bool:
        """Trusted on the previous run, not any more."""
        return self.previous_verdict == "trusted" and self.verdict != "trusted"

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``auditor audit --json`` (schema 1)."""
        return {
            "schema": 1,
            "site": self.site,
            "run_id": self.run_id,
            "started_at": self.started_at.isoformat(),
            "verdict": self.verdict,
            "reasons": [r.to_dict() for r in self.reasons],
            "inventory": dict(self.inventory),
            "dispersion": self.dispersion,
            "sample": self.sample.to_dict(),
            "changes": self.changes.to_dict() if self.changes else None,
            "segments": [s.to_dict() for s in self.segments],
            "report": self.report,
            "previous_verdict": self.previous_verdict,
            "degraded": self.degraded,
            "recheck_days": _rounded(self.recheck_days),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "problems": list(self.problems),
            "notes": [n.to_dict() for n in self.notes],
            "savings": self.savings,
            "seed": self.seed,
            "crawl_batches": list(self.crawl_batches),
        }


@dataclass(frozen=True)
class PageObservation:
    """One sampled page of one run, as history keeps it."""

    loc: str
    sitemap: str
    stratum: str
    fetched_at: datetime
    lastmod: datetime | None = None
    lastmod_precision: str | None = None
    status: int | None = None
    error: str | None = None
    date_modified: datetime | None = None
    date_modified_precision: str | None = None
    date_modified_source: str | None = None
    date_modified_credible: bool | None = None
    why_not_credible: str | None = None
    date_published: datetime | None = None
    http_last_modified: datetime | None = None
    etag: str | None = None
    fp_exact: str | None = None
    fp_simhash: int | None = None
    fp_structured: str | None = None
    truncated: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    fp_blocks: bytes | None = None  # the page's text blocks (auditor.evidence.blocks)
    # Against the previous run's fetch of the same page (None when not compared):
    content_changed: bool | None = None  # its main content changed (template left out)
    change_share: float | None = None  # share of its main-content words in changed blocks
    change_distance: int | None = None  # simhash bits that differ
    change_summary: str | None = None  # where: "+2 paragraphs in the article body"
    template_changed: bool | None = None  # its template or page frame differed
    template_regions: str | None = None  # where, comma-separated: "footer, sidebar"
    change_method: str | None = None  # "blocks", or "exact" (whole-text hash, older fetches)
    #: Its own frame differed: the frame differences that are the site's template (in
    #: either run, or shared by most re-fetched pages) left out (None in older rows).
    own_frame_changed: bool | None = None
    # What the page said of its indexing (auditor.evidence.indexing; None in older rows):
    final_url: str | None = None  # after the redirects followed
    noindex: str | None = None  # where it said noindex: "meta", "header"
    canonical: str | None = None  # the canonical URL it named (absolute)
    # A list page: the newest lastmod its listed children carry (auditor.sampler.children)
    newest_child: datetime | None = None

    @property
    def ok(self) -> bool:
        """True when the page was fetched and read."""
        return self.error is None

    @classmethod
    def of(
        cls, page: SampledPage, evidence: PageEvidence, newest_child: datetime | None = None
    ) -> PageObservation:
        """The observation of a sampled page and what it said (``newest_child``: the
        newest lastmod of the children it lists, when it is a list page dated so)."""
        dm, fp = evidence.date_modified, evidence.fingerprint
        return cls(
            loc=page.loc,
            sitemap=page.sitemap,
            stratum=page.stratum,
            fetched_at=evidence.fetched_at,
            lastmod=page.lastmod,
            lastmod_precision=page.lastmod_precision,
            status=evidence.status,
            error=evidence.error,
            date_modified=dm.value if dm else None,
            date_modified_precision=dm.precision if dm else None,
            date_modified_source=dm.source if dm else None,
            date_modified_credible=dm.credible if dm else None,
            why_not_credible=dm.why_not_credible if dm else None,
            date_published=evidence.date_published.value if evidence.date_published else None,
            http_last_modified=(
                evidence.http_last_modified.value if evidence.http_last_modified else None
            ),
            etag=evidence.etag,
            fp_exact=fp.exact if fp else None,
            fp_simhash=fp.simhash if fp else None,
            fp_structured=fp.structured if fp else None,
            truncated=evidence.truncated,
            fp_blocks=(fp.blocks or None) if fp else None,
            final_url=evidence.final_url,
            noindex=evidence.noindex,
            canonical=evidence.canonical,
            newest_child=newest_child,
        )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _interval(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else [round(value[0], 4), round(value[1], 4)]

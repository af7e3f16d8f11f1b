"""The whole pipeline for one site: walk, analyse, sample, score, save.

Everything is gathered in memory and saved in one transaction at the end, so an
interrupted audit leaves no trace and never harms an earlier run. The two halves
stand apart: :func:`run_audit` reads no database (it is given the site's
:class:`Previous` and returns an :class:`AuditBundle`), and :func:`save_audit` is
the one write, so a fleet runs the first on its workers and the second where the
history lives.

Touches: the network, the database.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from auditor.dispersion import analyse
from auditor.dispersion.segments import SEPARATOR, Segmenter
from auditor.errors import Unreachable, UsageError
from auditor.evidence import PageEvidence, mark_shared_date_modified
from auditor.models import SitemapFile
from auditor.planner.robots import stored_robots
from auditor.sampler import SampledPage, SampleOptions, SampleRun, sample_site
from auditor.sampler.children import ChildDates
from auditor.sampler.moved import with_moved
from auditor.schemes import no_tls_hint
from auditor.scorer import PastRun, ScoreInputs, sampling_status, score
from auditor.scorer.changes import compare_pages
from auditor.scorer.doubt import wanted_pages
from auditor.scorer.result import MAX_PROBLEMS_KEPT, AuditResult, PageObservation, Reason
from auditor.scorer.window import WINDOW_DAYS, WINDOW_RUNS
from auditor.walker import WalkOptions
from auditor.walker.discovery import Target, classify_target
from auditor.walker.inventory import Inventory, load_inventory
from auditor.walker.reach import unreached
from auditor.walker.reuse import PreviousRun

if TYPE_CHECKING:
    import pandas as pd

    from auditor.dispersion import DispersionReport
    from auditor.history import History, RunRecord
    from auditor.history.crawlcounts import CrawlLogCounts, PendingFetches
    from auditor.history.robots import StoredRobots
    from auditor.http import HttpClient
    from auditor.sampler.pacing import HostPacer

__all__ = [
    "AuditBundle",
    "AuditOptions",
    "Clients",
    "Clock",
    "Previous",
    "audit_site",
    "previous_of",
    "run_audit",
    "save_audit",
    "site_of",
]

Progress = Callable[[str], None]
#: What time it is: an aware datetime.
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class AuditOptions:
    """How an audit behaves; every field has a named default."""

    walk: WalkOptions = field(default_factory=WalkOptions)
    sample: SampleOptions = field(default_factory=SampleOptions)
    seed: int | None = None  # the sample's seed; None: derived from the site's origin
    #: What time it is; None: the real clock. Every instant the run records (its start and
    #: end, when each sitemap and page was fetched) is on this clock, shifted from the
    #: real one by the same amount: the demo's runs are days apart on a simulated clock.
    clock: Clock | None = None


@dataclass(frozen=True)
class Previous:
    """What the history knows of a site that its next audit needs (picklable)."""

    run: RunRecord | None = None  # the latest run, None on a first audit
    entries: pd.DataFrame | None = None  # the latest inventory, for lastmod movement
    past_runs: tuple[PastRun, ...] = ()  # the window of recent runs, newest first
    runs_so_far: int = 0  # runs saved, for the sample's seed
    #: The latest run's sitemap files: with ``entries``, what lets an unchanged file be
    #: asked for conditionally and reused on a 304 (:mod:`auditor.walker.reuse`).
    files: tuple[SitemapFile, ...] = ()
    #: What the crawler's fetches showed since the latest run, and before it within the
    #: window (:class:`~auditor.scorer.ScoreInputs`): URL by URL for the files the latest
    #: run split into groups, so that each of today's groups gets its own.
    crawled: CrawlLogCounts | None = None
    crawled_earlier: CrawlLogCounts | None = None
    #: The window's fetches pending a walk made after them (left out of the counts
    #: above): this audit's walk judges them (:func:`_crawl_counts`), and the same
    #: judgement is kept when its run is saved (:func:`save_audit`).
    pending: PendingFetches | None = None
    #: The latest run's verdict of each segment, by segment key.
    segment_verdicts: Mapping[str, str] = field(default_factory=dict)

    def sitemaps(self) -> PreviousRun | None:
        """The store of the latest run's sitemap files, or None when there is none."""
        return PreviousRun(self.files, self.entries) if self.files else None

    @property
    def pages(self) -> tuple[PageObservation, ...]:
        """The pages of the latest run: the panel, and what changes are measured on."""
        return self.past_runs[0].pages if self.past_runs else ()


@dataclass(frozen=True)
class AuditBundle:
    """One finished audit, not yet saved: everything ``History.save_run`` needs."""

    result: AuditResult
    files: tuple[SitemapFile, ...]
    entries: pd.DataFrame
    pages: tuple[PageObservation, ...]
    robots: StoredRobots | None = None  # the robots.txt the sampler obeyed, for plans


@dataclass(frozen=True)
class Clients:
    """The HTTP clients and page pacer of an audit; None: the audit makes its own."""

    walk: HttpClient | None = None  # robots.txt and sitemaps
    pages: HttpClient | None = None  # pages (and robots.txt when the walk did not read it)
    pacer: HostPacer | None = None  # spaces the sampler's page requests


def site_of(target: str) -> tuple[str, Target]:
    """The site origin an audit is about, and what to walk.

    A site origin is walked from its robots.txt; a sitemap URL is walked directly
    and audited as its origin's site. A local file has no site: a usage error.
    """
    found = classify_target(target)
    if found.kind == "file":
        raise UsageError(f"{target}: an audit needs a site (a URL), not a local file")
    assert found.site is not None  # not a file
    return found.site, found


def audit_site(
    target: str,
    history: History,
    options: AuditOptions | None = None,
    *,
    on_progress: Progress | None = None,
) -> AuditResult:
    """Audit one site against its history and save the run; returns the saved result."""
    site, _ = site_of(target)
    bundle = run_audit(target, previous_of(history, site), options, on_progress=on_progress)
    return save_audit(history, bundle)


def previous_of(history: History, site: str) -> Previous:
    """What ``site``'s history tells its next audit (read by the history's owner)."""
    run = history.latest_run(site)
    recent = history.runs(site)
    window = [PastRun(r.started_at, tuple(history.pages(r.run_id))) for r in recent[-WINDOW_RUNS:]]
    files = tuple(SitemapFile(**f) for f in history.sitemap_files(run.run_id)) if run else ()
    verdicts = history.segment_verdicts(run.run_id) if run else {}
    crawled = earlier = pending = None
    site_id = history.site_id(site)
    if run is not None and site_id is not None:  # the crawl since the latest run, and
        split = _split_files(verdicts)  # the window's days before it
        crawled = history.crawl_log_counts(
            site, run.started_at, by_url=split, batches=True, pending=False
        )
        oldest = run.started_at - timedelta(days=WINDOW_DAYS)
        earlier = history.crawl_log_counts(
            site, oldest, run.started_at, by_url=split, batches=True, pending=False
        )
        pending = history.pending_fetches(site_id, oldest, keys=False)  # judged, not kept
    return Previous(
        run=run,
        entries=history.latest_entries(site) if run else None,
        past_runs=tuple(reversed(window)),
        runs_so_far=len(recent),
        files=files,
        crawled=crawled,
        crawled_earlier=earlier,
        pending=pending,
        segment_verdicts=verdicts,
    )


def _split_files(segment_verdicts: Mapping[str, str]) -> set[str]:
    """The files a run split into groups, from its segments' keys: the crawl log is read
    URL by URL for them (:mod:`auditor.history.crawlcounts`). The audit reads the history
    before it walks, so the latest run's groupings stand for this run's; a file this run
    splits first has its crawl counts in its groups from the next run on."""
    return {key.partition(SEPARATOR)[0] for key in segment_verdicts if SEPARATOR in key}


def run_audit(
    target: str,
    previous: Previous,
    options: AuditOptions | None = None,
    *,
    on_progress: Progress | None = None,
    clients: Clients | None = None,
) -> AuditBundle:
    """Audit one site without touching the history: walk, analyse, sample, score.
    Raises :class:`~auditor.errors.Unreachable` when nothing of the site answered.

    ``previous`` is what the history knew (:func:`previous_of`); the returned bundle is
    everything :func:`save_audit` needs, and can be pickled (a fleet's workers run this
    and send the bundle back to the process that owns the history). ``clients`` lets a
    fleet put its own HTTP clients and pacer in the way of every request.
    """
    options = options or AuditOptions()
    clients = clients or Clients()
    say = on_progress or (lambda _message: None)
    site, walk_target = site_of(target)
    real = datetime.now(UTC)
    started = options.clock() if options.clock else real
    shift = started - real  # zero on the real clock

    say(f"walking {walk_target.value}")
    found = load_inventory(
        walk_target, options.walk, client=clients.walk, previous=previous.sitemaps()
    )
    cause = unreached(found.robots, found.files, found.problems)
    if cause is not None:  # nothing answered: no finding about the site to score or save
        raise Unreachable(site, no_tls_hint(site, cause))
    inventory = _shifted(found, shift)
    inputs = _score_inputs(previous, site, started, inventory)
    entries = _with_segments(inventory.entries, inputs.dispersion.segmenter)
    children = ChildDates(entries)  # a list page's children, looked up by its links
    run = _sample(previous, inputs, inventory, entries, options, shift, children, say, clients)
    say(f"scoring {site}")
    observations = [_observe(page, evidence, shift, children) for page, evidence in run.pages]
    # each page with its change since the previous run, if it was read then too
    observations = compare_pages(observations, inputs.previous_pages)
    walls = Counter(e.error_detail or "" for _, e in run.pages if e.error == "blocked")
    result = score(replace(inputs, pages=observations, walls=walls))
    problems = tuple(p.to_dict() for p in inventory.problems[:MAX_PROBLEMS_KEPT])
    seed = _seed(site, previous.runs_so_far, options.seed)
    result = replace(result, finished_at=datetime.now(UTC) + shift, problems=problems, seed=seed)
    result = _with_extensions(result, inventory, inputs.dispersion)
    robots = stored_robots(run.robots, started)
    return AuditBundle(result, inventory.files, inventory.entries, tuple(observations), robots)


def _with_extensions(
    result: AuditResult, inventory: Inventory, dispersion: DispersionReport
) -> AuditResult:
    """The result with what the sitemap extensions say (as ``auditor inspect`` does): their
    shares in ``dispersion.extensions``, and a ``publication-date-right`` note per news
    sitemap whose lastmod says nothing while its publication dates are right."""
    from auditor.inspection import inspection_of

    found = inspection_of(inventory, dispersion)
    if found.extensions is None:
        return result
    by_sitemap = {k: v.to_dict() for k, v in found.sitemap_extensions.items()}
    extensions = {**found.extensions.to_dict(), "by_sitemap": by_sitemap}
    notes = [Reason(str(n["code"]), str(n["detail"]), str(n["segment"])) for n in found.notes]
    return replace(
        result,
        dispersion={**result.dispersion, "extensions": extensions},
        notes=(*result.notes, *notes),
    )


def save_audit(history: History, bundle: AuditBundle, *, fleet: int | None = None) -> AuditResult:
    """Save an audit's run in one transaction; returns the result with its run id and
    what scheduling on its verdicts saves (``savings``, from the crawl log's rates).
    ``fleet``: the run is its site's in that fleet's plan (``History.plan_fleet``)."""
    from auditor.crawl.resolve import resolve_walk
    from auditor.planner import site_figures

    figures = site_figures(history, bundle.result.to_dict(), bundle.entries)
    result = replace(bundle.result, savings=figures.to_dict())
    run_id = history.save_run(
        result, files=bundle.files, entries=bundle.entries, pages=bundle.pages, fleet=fleet
    )
    resolve_walk(history, result.site, result.started_at, bundle.entries)  # as the worker
    if bundle.robots is not None:  # a plan on the stored walk leaves out what it forbids
        history.save_robots(result.site, bundle.robots)
    return replace(result, run_id=run_id)


def _score_inputs(
    previous: Previous, site: str, started: datetime, inventory: Inventory
) -> ScoreInputs:
    """What the scorer reads, from the walk and the site's history; no pages yet."""
    dispersion = analyse(inventory, previous.entries)
    crawled, earlier = _crawl_counts(previous, inventory.entries, started)
    return ScoreInputs(
        site=site,
        started_at=started,
        inventory=_summary(inventory),
        readable=inventory.readable,
        dispersion=dispersion,
        pages=[],
        previous_pages=list(previous.pages),
        previous_verdict=previous.run.verdict if previous.run else None,
        past_runs=previous.past_runs,
        crawled=_attributed(crawled, dispersion.segmenter),
        crawled_earlier=_attributed(earlier, dispersion.segmenter),
        previous_segments=previous.segment_verdicts,
    )


def _crawl_counts(
    previous: Previous, entries: pd.DataFrame, walked_at: datetime
) -> tuple[CrawlLogCounts | None, CrawlLogCounts | None]:
    """The crawl's counts since the latest run and before it, with the fetches pending a
    walk judged against this audit's (:func:`auditor.crawl.resolve.resolve`, the call
    :func:`save_audit` keeps): in the worker, from what ``previous`` carries."""
    pending, run = previous.pending, previous.run
    if pending is None or not len(pending) or run is None:
        return previous.crawled, previous.crawled_earlier
    from auditor.crawl.resolve import resolve
    from auditor.history.crawlcounts import CrawlLogCounts

    codes = resolve(pending, entries, walked_at)
    split = _split_files(previous.segment_verdicts)
    oldest = run.started_at - timedelta(days=WINDOW_DAYS)
    since = pending.counted(codes, run.started_at, by_url=split)
    before = pending.counted(codes, oldest, run.started_at, by_url=split)
    none = CrawlLogCounts()  # counts that are empty may still name the batches they read
    return (
        (none if previous.crawled is None else previous.crawled).plus(since),
        (none if previous.crawled_earlier is None else previous.crawled_earlier).plus(before),
    )


def _attributed(counts: CrawlLogCounts | None, segmenter: Segmenter) -> CrawlLogCounts | None:
    """The crawl's counts keyed by this run's segments, once: the scorer judges again
    after every sampled page, and would label the same URLs each time."""
    return counts.attributed(segmenter) if counts is not None else None


def _sample(
    previous: Previous,
    inputs: ScoreInputs,
    inventory: Inventory,
    entries: pd.DataFrame,
    options: AuditOptions,
    shift: timedelta,
    children: ChildDates,
    say: Progress,
    clients: Clients,
) -> SampleRun:
    """Sample the site's pages (``entries``: the inventory's, with their segment keys),
    sequentially: the scorer says which sub-sitemaps are decided on the pages fetched
    so far. The previous run's pages are the panel; those whose lastmod moved since
    (since their fetch, or since the previous walk for the others) come first."""
    budget = min(options.sample.sample, len(inventory.entries))
    panel = [p for p in inputs.previous_pages if p.ok]
    fetched = [(p.loc, p.lastmod) for p in panel]
    done = [0]

    def page_done(_page: object, _fetched: object) -> None:
        done[0] += 1
        say(f"sampled {done[0]} of up to {budget} pages")

    say(f"sampling up to {budget} pages of {len(inventory.entries):,}")
    return sample_site(
        inputs.site,
        with_moved(entries, previous.entries, fetched),
        options.sample,
        seed=_seed(inputs.site, previous.runs_so_far, options.seed),
        panel=[p.loc for p in panel],
        client=clients.pages,
        pacer=clients.pacer,
        on_page=page_done,
        judge=lambda pages: sampling_status(
            replace(inputs, pages=_observed(pages, shift, children))
        ),
        robots=inventory.robots,  # the walk's robots.txt: asked for once per audit
        wanted=wanted_pages(previous.segment_verdicts),  # thin last time: pages first
    )


def _with_segments(entries: pd.DataFrame, segmenter: Segmenter) -> pd.DataFrame:
    """The entries with each one's segment key, where a file was split into groups: the
    sample is stratified by group, so a group without dates of its own still gets pages."""
    if not segmenter.groupings:
        return entries
    keys = segmenter.keys(entries["sitemap"].astype(str).tolist(), entries["loc"].tolist())
    return entries.assign(segment=keys)


def _summary(inventory: Inventory) -> dict[str, int]:
    """The AuditResult's ``inventory``: the walk's figures, and ``reused``, the sitemap
    files answered 304 Not Modified whose entries the previous run gave."""
    return {**inventory.summary(), "reused": sum(f.reused for f in inventory.files)}


def _shifted(inventory: Inventory, shift: timedelta) -> Inventory:
    """The inventory with its files' fetch times on the audit's clock."""
    if not shift:
        return inventory
    files = tuple(replace(f, fetched_at=f.fetched_at + shift) for f in inventory.files)
    return replace(inventory, files=files)


def _observe(
    page: SampledPage, evidence: PageEvidence, shift: timedelta, children: ChildDates
) -> PageObservation:
    """What history keeps of a sampled page, its fetch time on the audit's clock."""
    newest_child = children.newest(page.loc, page.key, evidence.links) if evidence.ok else None
    observation = PageObservation.of(page, evidence, newest_child)
    if shift:
        observation = replace(observation, fetched_at=observation.fetched_at + shift)
    return observation


def _observed(
    pages: Sequence[tuple[SampledPage, PageEvidence]], shift: timedelta, children: ChildDates
) -> list[PageObservation]:
    """The pages fetched so far as the scorer reads them (a dateModified shared across
    them marked, as it will be at the end)."""
    evidence = mark_shared_date_modified([e for _, e in pages])
    return [_observe(p, e, shift, children) for (p, _), e in zip(pages, evidence, strict=True)]


def _seed(site: str, runs_so_far: int, base: int | None) -> int:
    """A sample seed that differs per site and per run, and is reproducible."""
    return (zlib.crc32(site.encode()) if base is None else base) * 1_000 + runs_so_far

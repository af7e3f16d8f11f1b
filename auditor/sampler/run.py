"""One sampling run over a site: robots.txt, the sample, the fetches, the counts.

Fixed sampling fetches a sample chosen at once. Sequential sampling (given a ``judge``
that tells, from the pages fetched so far, which sub-sitemaps are decided) fetches one
page at a time where the verdict is still open, and stops early when every sub-sitemap
is decided: a clear-cut site costs fewer requests than the budget, an unclear one all.

Touches: the network.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from auditor.evidence import PageEvidence, mark_shared_date_modified
from auditor.http import PAGE_ACCEPT, HttpClient, HttpOptions
from auditor.sampler.choose import DEFAULT_SAMPLE, SampledPage, SequentialPlan, choose_sample
from auditor.sampler.fetch import (
    PAGE_MAX_BYTES,
    STOPPED,
    FetchedPage,
    PageFetcher,
    evidence_of,
)
from auditor.sampler.pacing import DEFAULT_DELAY, MAX_DELAY, HostPacer, sampling_budget
from auditor.sampler.robots import RobotsPolicy, fetch_robots, policy_of
from auditor.walker.robotsfile import RobotsFile, robots_url

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Judge", "SampleOptions", "SampleRun", "sample_site"]

#: Candidates looked at per missing page when topping up after robots.txt skips.
_TOP_UP_POOL = 20

PageCallback = Callable[[SampledPage, FetchedPage], None]
#: From the pages fetched so far, each sub-sitemap's status (choose.CONDEMNED, DECIDED,
#: OPEN; a sub-sitemap not named is open).
Judge = Callable[[Sequence[tuple[SampledPage, PageEvidence]]], Mapping[str, str]]
#: Reasons a page was never requested.
NOT_REQUESTED = frozenset({"robots", "off-site", "not-http"}) | STOPPED
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SampleOptions:
    """How a sampling run behaves; every field has a named default."""

    sample: int = DEFAULT_SAMPLE
    delay: float = DEFAULT_DELAY
    max_bytes: int = PAGE_MAX_BYTES
    rdfa: bool = False  # RDFa extraction is slow (~50 ms a page): off unless asked
    #: Seconds the page fetches may take in all; None: ``sampling_budget(sample, delay)``
    #: with the larger of ``delay`` and the site's Crawl-delay.
    time_budget: float | None = None
    sequential: bool = True  # with a judge: stop sampling a sub-sitemap once it is decided
    http: HttpOptions = field(default_factory=lambda: HttpOptions(retries=0, accept=PAGE_ACCEPT))


@dataclass(frozen=True)
class SampleRun:
    """The pages of one run: how each was chosen and what it said about itself.

    A dateModified shared by (nearly) every page of the sample is already marked
    not credible (``shared-date-modified``).
    """

    robots: RobotsPolicy
    pages: tuple[tuple[SampledPage, PageEvidence], ...]
    requests: int  # HTTP requests made for pages, retries included

    @property
    def skipped_robots(self) -> int:
        """Pages robots.txt did not allow (never requested)."""
        return sum(e.error == "robots" for _, e in self.pages)

    @property
    def requested(self) -> int:
        """Pages asked for over HTTP."""
        return sum(e.error not in NOT_REQUESTED for _, e in self.pages)

    @property
    def fetched(self) -> int:
        """Pages fetched and read as HTML."""
        return sum(e.ok for _, e in self.pages)

    @property
    def stopped(self) -> tuple[str, str] | None:
        """Why sampling stopped before the end (``overloaded`` or ``time-budget``, and
        the detail), or None when every page had its turn."""
        return _stopped(self.pages)


def sample_site(
    site: str,
    entries: pd.DataFrame,
    options: SampleOptions | None = None,
    *,
    seed: int = 0,
    panel: Iterable[str] = (),
    client: HttpClient | None = None,
    pacer: HostPacer | None = None,
    on_page: PageCallback | None = None,
    judge: Judge | None = None,
    robots: RobotsFile | None = None,
    wanted: Mapping[str, int] | None = None,
) -> SampleRun:
    """Choose and fetch a polite sample of ``site``'s pages from its inventory entries.

    Pages robots.txt disallows are skipped (never requested) and counted; as long as
    the budget allows, allowed pages of the same sub-sitemaps take their place. With a
    ``judge`` (and ``options.sequential``), pages are chosen one at a time where doubt is.
    When the host is given up (it kept answering 429/503) or the time budget is spent,
    sampling stops and the pages not asked for say why (``stopped``). ``robots`` is
    the site's robots.txt response when it was fetched already (the walk's): its policy
    is used, and robots.txt is not asked for again. ``wanted``: pages wanted at least,
    by segment key, served first when sampling sequentially (:class:`SequentialPlan`).
    ``entries`` with a boolean ``lastmod_moved`` column (:func:`auditor.sampler.moved.with_moved`)
    get the pages whose lastmod moved first (:mod:`auditor.sampler.choose`).
    """
    options = options or SampleOptions()
    http = replace(options.http, accept=PAGE_ACCEPT)
    own_client = client is None
    client = client or HttpClient(http)
    try:
        policy = _policy(client, site, robots)
        fetcher = PageFetcher(
            site,
            client,
            policy,
            pacer or HostPacer(options.delay),
            max_bytes=options.max_bytes,
            time_budget=_time_budget(options, policy),
        )
        if judge is not None and options.sequential:
            plan = SequentialPlan(entries, options.sample, seed=seed, panel=panel, wanted=wanted)
            pages = _fetch_sequential(fetcher, plan, judge, options.rdfa, on_page)
        else:
            pages = _fetch_fixed(fetcher, entries, options, seed, panel, on_page)
        evidence = mark_shared_date_modified([e for _, e in pages])
        chosen_pages = [p for p, _ in pages]
        return SampleRun(policy, tuple(zip(chosen_pages, evidence, strict=True)), fetcher.requests)
    finally:
        if own_client:
            client.close()


def _policy(client: HttpClient, site: str, robots: RobotsFile | None) -> RobotsPolicy:
    """The site's robots.txt policy: of the response given (the site's own), else fetched."""
    given = robots is not None and robots.url == robots_url(site)
    policy = policy_of(robots) if robots is not None and given else fetch_robots(client, site)
    how = "the walk's" if given else "fetched"
    _log.info("robots.txt %s (%s): %s (%s)", policy.url, how, policy.rule, policy.detail)
    return policy


def _fetch_fixed(
    fetcher: PageFetcher,
    entries: pd.DataFrame,
    options: SampleOptions,
    seed: int,
    panel: Iterable[str],
    on_page: PageCallback | None,
) -> list[tuple[SampledPage, PageEvidence]]:
    """The whole sample chosen at once, then robots.txt skips replaced."""
    chosen = choose_sample(entries, options.sample, seed=seed, panel=panel)
    pages = _fetch_all(fetcher, chosen, options.rdfa, on_page)
    skipped = sum(e.error == "robots" for _, e in pages)
    if skipped and fetcher.robots.rule == "parsed" and _stopped(pages) is None:
        extra = _replacements(entries, fetcher.robots, {p.loc for p, _ in pages}, skipped, seed)
        pages += _fetch_all(fetcher, extra, options.rdfa, on_page)
    return pages


def _fetch_sequential(
    fetcher: PageFetcher,
    plan: SequentialPlan,
    judge: Judge,
    rdfa: bool,
    on_page: PageCallback | None,
) -> list[tuple[SampledPage, PageEvidence]]:
    """One page at a time, each where the judge says the verdict is still open."""
    pages: list[tuple[SampledPage, PageEvidence]] = []
    while (page := plan.next_page(judge(pages))) is not None:
        fetched, evidence = _fetch_one(fetcher, page, rdfa, on_page)
        plan.record(page, requested=fetched.requested)
        pages.append((page, evidence))
        if fetched.error in STOPPED:
            break  # the host was given up or the time is spent: no page more is asked for
    return pages


def _fetch_all(
    fetcher: PageFetcher, chosen: list[SampledPage], rdfa: bool, on_page: PageCallback | None
) -> list[tuple[SampledPage, PageEvidence]]:
    """Fetch and read each page in turn; only its evidence is kept, never its body."""
    return [(page, _fetch_one(fetcher, page, rdfa, on_page)[1]) for page in chosen]


def _fetch_one(
    fetcher: PageFetcher, page: SampledPage, rdfa: bool, on_page: PageCallback | None
) -> tuple[FetchedPage, PageEvidence]:
    """Fetch one page (or say why not, in the log too) and read its evidence."""
    fetched = fetcher.fetch(page.loc)
    if fetched.error is not None:
        what = "skipped" if fetched.error in NOT_REQUESTED else "not usable"
        _log.info("%s %s: %s (%s)", what, page.loc, fetched.error, fetched.detail)
    if on_page is not None:
        on_page(page, fetched)
    return fetched, evidence_of(fetched, rdfa=rdfa)


def _time_budget(options: SampleOptions, robots: RobotsPolicy) -> float:
    """The run's sampling time budget: as asked, else derived from the sample size and
    the delay that will hold (the larger of ``--delay`` and Crawl-delay)."""
    if options.time_budget is not None:
        return options.time_budget
    crawl_delay = min(MAX_DELAY, robots.crawl_delay or 0.0)
    return sampling_budget(options.sample, max(options.delay, crawl_delay))


def _stopped(pages: Iterable[tuple[SampledPage, PageEvidence]]) -> tuple[str, str] | None:
    """The first reason a page was not asked for because sampling stopped, if any."""
    for _, evidence in pages:
        if evidence.error is not None and evidence.error in STOPPED:
            return evidence.error, evidence.error_detail or ""
    return None


def _replacements(
    entries: pd.DataFrame, robots: RobotsPolicy, taken: set[str], wanted: int, seed: int
) -> list[SampledPage]:
    """Up to ``wanted`` fresh pages robots.txt allows, drawn from a bounded pool."""
    rng = np.random.default_rng(seed + 1)
    size = min(len(entries), wanted * _TOP_UP_POOL)
    pool = entries.iloc[rng.choice(len(entries), size=size, replace=False)]
    allowed = pool[[loc not in taken and robots.allows(loc) for loc in pool["loc"]]]
    return [
        replace(p, stratum=f"{p.stratum}-replacement")
        for p in choose_sample(allowed, wanted, seed=seed + 1)
    ]

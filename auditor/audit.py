"""The whole pipeline for one site: walk, analyse, sample, score, save.

Everything is gathered in memory and saved in one transaction at the end, so an
interrupted audit leaves no trace and never harms an earlier run.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from auditor.dispersion import analyse
from auditor.errors import UsageError
from auditor.inventory import load_inventory
from auditor.result import MAX_PROBLEMS_KEPT, AuditResult, PageObservation
from auditor.sampler import SampleOptions, sample_site
from auditor.scorer import ScoreInputs, score
from auditor.scorer.changes import compare_pages
from auditor.walker import WalkOptions
from auditor.walker.discovery import Target, classify_target

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["AuditOptions", "audit_site", "site_of"]

Progress = Callable[[str], None]


@dataclass(frozen=True)
class AuditOptions:
    """How an audit behaves; every field has a named default."""

    walk: WalkOptions = field(default_factory=WalkOptions)
    sample: SampleOptions = field(default_factory=SampleOptions)
    seed: int | None = None  # the sample's seed; None: derived from the site's origin


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
    options = options or AuditOptions()
    say = on_progress or (lambda _message: None)
    site, walk_target = site_of(target)
    started = datetime.now(UTC)
    previous_run = history.latest_run(site)
    previous_entries = history.latest_entries(site) if previous_run else None
    previous_pages = history.latest_pages(site) if previous_run else []

    say(f"walking {walk_target.value}")
    inventory = load_inventory(walk_target, options.walk)
    dispersion = analyse(inventory, previous_entries)
    panel = [p.loc for p in previous_pages if p.ok]
    budget = min(options.sample.sample, len(inventory.entries))
    done = [0]

    def page_done(_page: object, _fetched: object) -> None:
        done[0] += 1
        say(f"sampled {done[0]} of {budget} pages")

    say(f"sampling {budget} pages of {len(inventory.entries):,}")
    run = sample_site(
        site,
        inventory.entries,
        options.sample,
        seed=_seed(site, len(history.runs(site)), options.seed),
        panel=panel,
        on_page=page_done,
    )
    say(f"scoring {site}")
    observations = [PageObservation.of(page, evidence) for page, evidence in run.pages]
    observations = compare_pages(observations, previous_pages)  # each with its change, if any
    result = score(
        ScoreInputs(
            site=site,
            started_at=started,
            inventory=inventory.summary(),
            readable=inventory.readable,
            dispersion=dispersion,
            pages=observations,
            previous_pages=previous_pages,
            previous_verdict=previous_run.verdict if previous_run else None,
        )
    )
    problems = tuple(p.to_dict() for p in inventory.problems[:MAX_PROBLEMS_KEPT])
    result = replace(result, finished_at=datetime.now(UTC), problems=problems)
    run_id = history.save_run(
        result, files=inventory.files, entries=inventory.entries, pages=observations
    )
    return replace(result, run_id=run_id)


def _seed(site: str, runs_so_far: int, base: int | None) -> int:
    """A sample seed that differs per site and per run, and is reproducible."""
    return (zlib.crc32(site.encode()) if base is None else base) * 1_000 + runs_so_far

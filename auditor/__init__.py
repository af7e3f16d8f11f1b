"""auditor: can a website's sitemap <lastmod> be trusted for crawl scheduling?

The library API mirrors the command line::

    import auditor
    w = auditor.walk("https://example.com")
    for entry in w:
        ...
    w.problems

    inventory = auditor.load_inventory("https://example.com")
    inventory.entries  # a pandas DataFrame

    evidence = auditor.read_page(html_bytes, url=url, headers=headers, status=200,
                                 fetched_at=fetched_at)
    evidence.date_modified, evidence.fingerprint

    with auditor.History.open() as history:   # AUDITOR_DB, else the default location
        history.runs("https://example.com")
        result = auditor.audit_site("https://example.com", history)
        for outcome in auditor.audit_fleet(["example.com", "example.org"], history):
            ...  # an AuditResult, saved, or a SiteFailure, as each site finishes

Touches: nothing.
"""

__version__ = "0.1.0"

import logging
import typing

import auditor._lazy as _lazy
from auditor.errors import AuditorError, HistoryError, NothingReadable, UsageError

# The library logs (one logger per module) and never says where: that is the program's choice.
logging.getLogger(__name__).addHandler(logging.NullHandler())

if typing.TYPE_CHECKING:
    from auditor.audit import AuditOptions, audit_site
    from auditor.crawl.record import CrawlSummary, record_fetches
    from auditor.crawl.records import FetchRecord
    from auditor.dispersion import DispersionReport, Flag
    from auditor.dispersion.analyse import analyse  # not the submodule `analyse` (mypy)
    from auditor.evidence import (
        Comparison,
        DatedValue,
        Fingerprint,
        PageEvidence,
        compare_lastmod,
        mark_shared_date_modified,
        read_page,
        simhash_distance,
    )
    from auditor.fleet import SiteFailure, audit_fleet
    from auditor.history import History
    from auditor.http import HttpClient, HttpOptions
    from auditor.inspection import Inspection, inspect_target
    from auditor.models import Problem, SitemapEntry, SitemapFile
    from auditor.planner import PlannedFetch, plan
    from auditor.walker import ProgressCallback, Target, Walk, WalkOptions
    from auditor.walker.inventory import Inventory, entries_to_dataframe, load_inventory

    # auditor.walker.walk, for type checkers: importing it here trips mypy (the name is
    # also the walker's submodule), so its signature is restated (tests/test_public_names.py
    # pins the two alike).
    def walk(
        target: str | Target,
        options: WalkOptions | None = None,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> Walk: ...


# Every name but the errors loads on first use: a command (and
# ``import auditor``) pays for the walker, the HTTP stack and the data stack only when
# it uses them.
_EXPORTS = {
    "HttpClient": "auditor.http",
    "HttpOptions": "auditor.http",
    "Walk": "auditor.walker",
    "Problem": "auditor.models",
    "SitemapEntry": "auditor.models",
    "SitemapFile": "auditor.models",
    "WalkOptions": "auditor.walker",
    "walk": "auditor.walker",
    "CrawlSummary": "auditor.crawl.record",
    "record_fetches": "auditor.crawl.record",
    "FetchRecord": "auditor.crawl.records",
    "PlannedFetch": "auditor.planner.make",
    "plan": "auditor.planner.make",
    "AuditOptions": "auditor.audit",
    "audit_site": "auditor.audit",
    "SiteFailure": "auditor.fleet",
    "audit_fleet": "auditor.fleet",
    "DispersionReport": "auditor.dispersion",
    "Flag": "auditor.dispersion",
    "analyse": "auditor.dispersion",
    "Comparison": "auditor.evidence",
    "DatedValue": "auditor.evidence",
    "Fingerprint": "auditor.evidence",
    "PageEvidence": "auditor.evidence",
    "compare_lastmod": "auditor.evidence",
    "mark_shared_date_modified": "auditor.evidence",
    "read_page": "auditor.evidence",
    "simhash_distance": "auditor.evidence",
    "History": "auditor.history",
    "Inspection": "auditor.inspection",
    "inspect_target": "auditor.inspection",
    "Inventory": "auditor.walker.inventory",
    "entries_to_dataframe": "auditor.walker.inventory",
    "load_inventory": "auditor.walker.inventory",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = [
    "AuditOptions",
    "AuditorError",
    "Comparison",
    "CrawlSummary",
    "DatedValue",
    "DispersionReport",
    "FetchRecord",
    "Fingerprint",
    "Flag",
    "History",
    "HistoryError",
    "HttpClient",
    "HttpOptions",
    "Inspection",
    "Inventory",
    "NothingReadable",
    "PageEvidence",
    "PlannedFetch",
    "Problem",
    "SiteFailure",
    "SitemapEntry",
    "SitemapFile",
    "UsageError",
    "Walk",
    "WalkOptions",
    "__version__",
    "analyse",
    "audit_fleet",
    "audit_site",
    "compare_lastmod",
    "entries_to_dataframe",
    "inspect_target",
    "load_inventory",
    "mark_shared_date_modified",
    "plan",
    "read_page",
    "record_fetches",
    "simhash_distance",
    "walk",
]

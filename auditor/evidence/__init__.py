"""The evidence stage: what one fetched page says about its own changes.

Pure: bytes and headers in, :class:`PageEvidence` out; fetching is the caller's.

- :func:`read_page` dates from structured data and headers, credibility, fingerprints;
- :func:`read_page_file` a saved page (fetching is the sampler's: robots.txt, politeness);
- :func:`mark_shared_date_modified` over a sample: a dateModified every page shares;
- :func:`compare_lastmod` a sitemap lastmod against a page's date;
- :func:`simhash_distance` how far apart two content fingerprints are;
- :func:`compare_runs` two runs' samples of a site: each re-fetched page's change (its
  size and place, template blocks left out) and whether the site's template changed.

Touches: nothing.
"""

import typing

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.evidence.change import PageChange
    from auditor.evidence.compare import DEFAULT_TOLERANCE, Comparison, compare_lastmod
    from auditor.evidence.credibility import RENDER_TIME_WINDOW, mark_shared_date_modified
    from auditor.evidence.dates import parse_page_date
    from auditor.evidence.files import read_page_file
    from auditor.evidence.fingerprint import simhash_distance
    from auditor.evidence.model import DatedValue, Fingerprint, PageEvidence
    from auditor.evidence.page import PAGE_MAX_BYTES, failed_page, read_page
    from auditor.evidence.runs import Fetch, RunComparison, TemplateChange, compare_runs

_EXPORTS = {
    "PageChange": "auditor.evidence.change",
    "DEFAULT_TOLERANCE": "auditor.evidence.compare",
    "Comparison": "auditor.evidence.compare",
    "compare_lastmod": "auditor.evidence.compare",
    "RENDER_TIME_WINDOW": "auditor.evidence.credibility",
    "mark_shared_date_modified": "auditor.evidence.credibility",
    "parse_page_date": "auditor.evidence.dates",
    "read_page_file": "auditor.evidence.files",
    "simhash_distance": "auditor.evidence.fingerprint",
    "DatedValue": "auditor.evidence.model",
    "Fingerprint": "auditor.evidence.model",
    "PageEvidence": "auditor.evidence.model",
    "PAGE_MAX_BYTES": "auditor.evidence.page",
    "failed_page": "auditor.evidence.page",
    "read_page": "auditor.evidence.page",
    "Fetch": "auditor.evidence.runs",
    "RunComparison": "auditor.evidence.runs",
    "TemplateChange": "auditor.evidence.runs",
    "compare_runs": "auditor.evidence.runs",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_TOLERANCE",
    "PAGE_MAX_BYTES",
    "RENDER_TIME_WINDOW",
    "Comparison",
    "DatedValue",
    "Fetch",
    "Fingerprint",
    "PageChange",
    "PageEvidence",
    "RunComparison",
    "TemplateChange",
    "compare_lastmod",
    "compare_runs",
    "failed_page",
    "mark_shared_date_modified",
    "parse_page_date",
    "read_page",
    "read_page_file",
    "simhash_distance",
]

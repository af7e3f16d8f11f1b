"""Coverage checks: a site's sitemaps against what was crawled (``auditor coverage``).

:func:`check_coverage` compares the URLs the freshest walk listed with a crawl log (or
the history's crawl record) and the audit's sample: listed URLs never crawled, URLs
crawled but listed in no sitemap (orphans), URLs listed in several sub-sitemaps, and
listed URLs that redirect, answer 4xx or 5xx, say noindex or name another canonical URL.

Touches: nothing.
"""

import typing

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.coverage.check import EXAMPLES, check_coverage
    from auditor.coverage.findings import FINDINGS
    from auditor.coverage.result import CoverageResult, SitemapCoverage, SitemapPair
    from auditor.coverage.tracker import Example

_EXPORTS = {
    "EXAMPLES": "auditor.coverage.check",
    "check_coverage": "auditor.coverage.check",
    "FINDINGS": "auditor.coverage.findings",
    "CoverageResult": "auditor.coverage.result",
    "SitemapCoverage": "auditor.coverage.result",
    "SitemapPair": "auditor.coverage.result",
    "Example": "auditor.coverage.tracker",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = [
    "EXAMPLES",
    "FINDINGS",
    "CoverageResult",
    "Example",
    "SitemapCoverage",
    "SitemapPair",
    "check_coverage",
]

"""One audited history shared by the report tests: a mixed site with a hostile page."""

from __future__ import annotations

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, PageState, SimulatedSite
from auditor.history import History
from auditor.sampler import SampleOptions

HOSTILE = '/blog/<script>alert("loc")</script>'


class HostileSite(SimulatedSite):
    """A site whose sitemap lists a page with markup in its URL and title."""

    def page_html(self, path, now):  # type: ignore[no-untyped-def]
        page = super().page_html(path, now)
        if page is not None and path == HOSTILE:
            page = page.replace("<title>", '<title><script>alert("title")</script>', 1)
        return page


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """(history path, site origin) after two audits with a change in between."""
    folder = tmp_path_factory.mktemp("report")
    sections = {"products": BEHAVIOURS["generation-time"], "blog": BEHAVIOURS["accurate-jsonld"]}
    site = HostileSite("mixed", sections, pages_per_section=40, seed=3)
    first = next(p for p in site.pages.values() if p.section == "blog")
    site.pages[HOSTILE] = PageState(HOSTILE, "blog", first.created, first.modified)
    # fixed sampling: 60 of the 81 pages, the hostile one among them (sequential sampling
    # would stop each sub-sitemap once decided, before reaching it)
    options = AuditOptions(sample=SampleOptions(sample=60, delay=0.0, sequential=False), seed=3)
    database = folder / "history.sqlite3"
    with SiteServer(site) as server, History.open(database) as history:
        audit_site(server.origin, history, options)
        site.tick()
        audit_site(server.origin, history, options)
        origin = server.origin
    return database, origin, folder

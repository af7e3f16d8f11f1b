"""The plan's walk of a site's sitemaps starts where the site's audit started."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import auditor
from auditor.audit import audit_site
from auditor.history import History
from tests.crawl.sites import OPTIONS, crawl
from tests.loopback import LoopbackServer

_SITEMAP = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{}</urlset>"""
_URL = "<url><loc>{{{{origin}}}}/docs/{}.html</loc><lastmod>{}</lastmod></url>"


def _build(root: Path, pages: dict[str, str]) -> None:
    """A site under ``/docs/`` whose sitemap neither robots.txt nor /sitemap.xml names."""
    (root / "docs").mkdir(exist_ok=True)
    for name in pages:
        (root / "docs" / f"{name}.html").write_text(
            f"<html><body><main><h1>{name}</h1><p>The page {name}.</p></main></body></html>"
        )
    entries = "".join(_URL.format(name, lastmod) for name, lastmod in pages.items())
    (root / "docs" / "sitemap.xml").write_text(_SITEMAP.format(entries))


def test_a_site_audited_from_a_sitemap_url_is_walked_from_it(db_url, tmp_path):
    pages = {f"p{n}": "2025-01-01" for n in range(5)}
    _build(tmp_path, pages)
    paths = [f"/docs/{p}.html" for p in pages]
    with LoopbackServer(root=tmp_path) as server, History.open(db_url) as history:
        audit_site(server.origin + "/docs/sitemap.xml", history, OPTIONS)
        at = datetime.now(UTC) - timedelta(days=2)
        auditor.record_fetches(history, crawl(server.origin, paths, at))
        _build(tmp_path, {**pages, "p0": "2025-03-01", "new": "2025-03-01"})
        planned = {f.url: f for f in auditor.plan(history, budget=100)}
        current = history.current_inventory(server.origin)

    assert planned[server.origin + "/docs/new.html"].reason == "new-url"
    assert planned[server.origin + "/docs/new.html"].sitemap == server.origin + "/docs/sitemap.xml"
    assert current is not None and len(current[2]) == 6  # the plan's walk was kept

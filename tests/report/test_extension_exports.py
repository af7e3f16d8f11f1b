"""An audit keeps what the sitemap extensions say, and ``auditor export`` writes it."""

from __future__ import annotations

import pandas as pd

from auditor.audit import AuditOptions, audit_site
from auditor.history import History
from auditor.report.exports import export_tables
from auditor.sampler import SampleOptions
from tests.loopback import LoopbackServer

SITEMAP = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:xhtml="http://www.w3.org/1999/xhtml">
{urls}
</urlset>"""


def _url(n: int) -> str:
    origin = "{{origin}}"  # the server writes its own origin in
    images = f"<image:image><image:loc>{origin}/img/{n}.jpg</image:loc></image:image>"
    alternate = f'<xhtml:link rel="alternate" hreflang="de" href="{origin}/de/p/{n}"/>'

    extras = (images if n % 2 == 0 else "") + (alternate if n % 4 == 0 else "")
    return f"<url><loc>{origin}/p/{n}</loc><lastmod>2026-11-{n + 1:02d}</lastmod>{extras}</url>"


def test_an_audit_keeps_the_extension_shares_and_the_export_writes_them(tmp_path):
    root = tmp_path / "site"
    (root / "p").mkdir(parents=True)
    (root / "sitemap.xml").write_text(SITEMAP.format(urls="\n".join(_url(n) for n in range(20))))
    for n in range(20):
        (root / "p" / str(n)).write_text(f"<html><body><p>page {n}</p></body></html>")
    options = AuditOptions(sample=SampleOptions(sample=4, delay=0.0), seed=1)
    with LoopbackServer(root) as server, History.open(tmp_path / "h.db") as history:
        result = audit_site(server.url("/sitemap.xml"), history, options)
        paths = export_tables(history, "csv", tmp_path / "out")

    shares = result.dispersion["extensions"]
    assert (shares["urls"], shares["with_images"], shares["with_hreflang"]) == (20, 10, 5)
    assert shares["share_with_images"] == 0.5
    (row,) = pd.read_csv(next(p for p in paths if p.name == "extensions.csv")).to_dict("records")
    assert row["sitemap"] == server.url("/sitemap.xml") and row["with_images"] == 10
    assert row["share_with_hreflang"] == 0.25 and row["run_id"] == result.run_id

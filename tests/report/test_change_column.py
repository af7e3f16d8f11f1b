"""The report's sampled-pages table says how each page compared with its previous fetch, and
the report notes a template change between the runs."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.history import History
from auditor.report import load_report_data, write_report
from auditor.report.data import page_change
from auditor.sampler import SampleOptions
from auditor.scorer.result import PageObservation
from tests.loopback import FIXTURES, LoopbackServer

SHOP = FIXTURES / "evolutions" / "shop"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shop")
    # the whole budget: every page is compared, not only until the verdict is decided
    options = AuditOptions(sample=SampleOptions(sample=40, delay=0.0, sequential=False), seed=1)
    with History.open(folder / "h.sqlite3") as history:
        with LoopbackServer(root=SHOP / "v1") as server:
            audit_site(server.origin, history, options)
            server.root = SHOP / "v2"
            audit_site(server.origin, history, options)
            origin = server.origin
        path = write_report(history, origin, folder / "out")
        data = load_report_data(history, origin)
    return path.read_text(encoding="utf-8"), data


def test_the_sampled_pages_table_has_each_pages_change(report):
    html, data = report
    assert "<th>since the previous run</th>" in html
    assert "changed: price 29.90 → 24.90 in the article body (2% of its words)" in html
    assert '<td class="change">template only: page body, article body, footer, notice</td>' in html
    compared = [p for p in data.pages if p.content_changed is not None]
    assert len(compared) == 18 and html.count('<td class="change">-</td>') == 1  # the new page


def test_the_template_change_is_a_note(report):
    html, _ = report
    assert '<section id="notes">' in html
    assert "<code>template-change</code>: the site&#39;s template changed between runs: " in html


def test_page_change_in_words():
    page = PageObservation("https://e.x/a", "https://e.x/s.xml", "panel", datetime.now(UTC))
    assert page_change(page) == "-"
    edited = replace(page, content_changed=True, change_share=0.125, change_summary="+2 paragraphs")
    assert page_change(edited) == "changed: +2 paragraphs (12% of its words)"
    same = replace(page, content_changed=False, change_summary="template only: footer")
    assert page_change(same) == "template only: footer"
    old = replace(page, content_changed=True, change_method="exact")
    assert page_change(old) == "changed: main text changed"

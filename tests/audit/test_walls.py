"""A site whose pages answer with bot walls: sampling stops early, and the verdict is
inconclusive with the reason ``blocked``, unless the lastmod values alone condemn it."""

from __future__ import annotations

import json

import pytest

from auditor.audit import audit_site
from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from auditor.scorer.walls import MIN_STOP
from tests.crawl.sites import OPTIONS
from tests.loopback import FIXTURES

WALL = (FIXTURES / "walls" / "cloudflare-challenge.html").read_text(encoding="utf-8")


class WalledSite(SiteServer):
    """A demo site whose pages (every ``every``-th one) answer with Cloudflare's
    challenge at ``status``; its robots.txt and sitemaps get through."""

    def __init__(self, site: SimulatedSite, status: int, every: int = 1) -> None:
        self.status, self.every, self.seen = status, every, 0
        super().__init__(site)

    def respond(self, path: str) -> tuple[int, str, str]:
        answer = super().respond(path)
        if path.startswith(("/robots.txt", "/sitemap")):
            return answer
        self.seen += 1
        if self.seen % self.every == 0:
            return self.status, "text/html; charset=UTF-8", WALL
        return answer


@pytest.mark.parametrize("status", [200, 403, 503])
def test_a_walled_site_is_inconclusive_with_the_reason_and_a_hint(tmp_path, status):
    site = SimulatedSite("walled", {"pages": BEHAVIOURS["accurate-jsonld"]}, 60, seed=3)
    with SiteServer(site) as open_server, History.open(tmp_path / "open.db") as history:
        assert audit_site(open_server.origin, history, OPTIONS).verdict == "trusted"
    with WalledSite(site, status) as server, History.open(tmp_path / "h.db") as history:
        result = audit_site(server.origin, history, OPTIONS)

    assert result.verdict == "inconclusive"
    blocked = result.reasons[0]
    assert blocked.code == "blocked"
    assert f"Cloudflare challenge page (HTTP {status}) x" in blocked.detail
    assert "--proxy" in blocked.detail and "--contact" in blocked.detail
    assert result.sample.requested <= MIN_STOP + 2  # a wall is not asked forty times
    assert result.sample.fetched == 0


def test_lastmod_values_that_condemn_a_site_need_no_page(tmp_path):
    site = SimulatedSite("gen", {"pages": BEHAVIOURS["generation-time"]}, 60, seed=3)
    with WalledSite(site, 403) as server, History.open(tmp_path / "h.db") as history:
        result = audit_site(server.origin, history, OPTIONS)
    assert result.verdict == "untrusted"
    assert "blocked" in {r.code for r in result.reasons}
    assert "generation-time" in {r.code for r in result.reasons}


def test_a_few_walls_in_a_sample_are_counted_and_do_not_decide(tmp_path):
    site = SimulatedSite("some", {"pages": BEHAVIOURS["accurate-jsonld"]}, 60, seed=3)
    with WalledSite(site, 403, every=6) as server, History.open(tmp_path / "h.db") as history:
        result = audit_site(server.origin, history, OPTIONS)
    assert result.verdict == "trusted"
    assert "blocked" not in {r.code for r in result.reasons}


def test_auditor_page_names_a_wall(capsys):
    site = SimulatedSite("one", {"pages": BEHAVIOURS["accurate-jsonld"]}, 3, seed=3)
    with WalledSite(site, 503) as server:
        assert main(["page", server.url("/pages/0"), "--json"]) == 1
    page = json.loads(capsys.readouterr().out)
    assert page["error"] == "blocked"

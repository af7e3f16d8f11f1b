"""Bot walls named by vendor, at 200, 403 and 503, and the pages that only look like one
(fixtures/walls/README.md says what each file models)."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.http import walls
from auditor.http.walls import Wall, html_kind, wall_of
from tests.loopback import FIXTURES

WALLS = FIXTURES / "walls"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"

#: file -> (headers it is served with, vendor, kind); the body alone names it at any status
BY_BODY = {
    "cloudflare-challenge.html": ({"Server": "cloudflare"}, "Cloudflare", "challenge"),
    "cloudflare-block.html": ({"Server": "cloudflare"}, "Cloudflare", "block"),
    "akamai-denied.html": ({"Server": "AkamaiGHost"}, "Akamai", "block"),
    "datadome-captcha.html": ({"X-DataDome": "protected"}, "DataDome", "captcha"),
    "perimeterx-captcha.html": ({}, "PerimeterX/HUMAN", "captcha"),
    "imperva-incident.html": ({"X-Iinfo": "5-123"}, "Imperva", "block"),
}


def _read(name: str) -> bytes:
    return (WALLS / name).read_bytes()


@pytest.mark.parametrize("status", [200, 403, 503])
@pytest.mark.parametrize("name", sorted(BY_BODY))
def test_a_vendors_wall_is_named_whatever_its_status(name, status):
    headers, vendor, kind = BY_BODY[name]
    assert wall_of(status, headers, _read(name)) == Wall(vendor, kind, status)


def test_a_challenge_told_by_its_headers_alone():
    challenge = wall_of(403, {"cf-mitigated": "challenge", "Server": "cloudflare"}, b"")
    assert challenge == Wall("Cloudflare", "challenge", 403)
    assert challenge.detail() == "Cloudflare challenge page (HTTP 403)"
    aws = wall_of(405, {"x-amzn-waf-action": "captcha"}, _read("aws-waf-captcha.html"))
    assert aws == Wall("AWS WAF", "captcha", 405)
    assert wall_of(405, {}, _read("aws-waf-captcha.html")) == Wall("AWS WAF", "captcha", 405)


def test_a_generic_captcha_is_a_wall_only_when_the_page_is_about_it():
    assert wall_of(200, {}, _read("generic-captcha.html")) == Wall(None, "captcha", 200)
    assert wall_of(200, {}, _read("contact-form.html")) is None
    assert wall_of(403, {}, _read("contact-form.html")) == Wall(None, "captcha", 403)


@pytest.mark.parametrize("status", [200, 404])
def test_sensor_scripts_on_a_protected_page_are_no_wall(status):
    headers = {"Server": "cloudflare", "X-DataDome": "protected"}
    assert wall_of(status, headers, _read("protected-page.html")) is None


def test_a_sitemap_url_serving_html_says_which_page_it_is():
    assert html_kind(_read("login.html")) == "login"
    assert html_kind(_read("consent.html")) == "consent"
    assert html_kind(_read("error.html")) == "error"
    assert html_kind(_read("protected-page.html")) is None


def test_no_real_page_of_the_corpus_reads_as_a_wall():
    pages = sorted((CORPUS / "html").rglob("*.htm*")) if CORPUS.is_dir() else []
    if not pages:
        pytest.skip("the shared corpus is not here")
    walls = {p.name: wall_of(200, {}, p.read_bytes()) for p in pages}
    assert {name: w for name, w in walls.items() if w is not None} == {}
    assert len(pages) >= 20


def test_an_ordinary_page_is_searched_for_few_tells(monkeypatch):
    """Every page fetched is probed (64 KiB of it, twice in a sample: the fetch and the
    evidence); the tells that only count on a refusal, a vendor's server or a title are
    looked for only then, so an ordinary page is searched for fewer than half of them."""
    searched: list[bytes] = []
    has = walls._Response.has

    def counting(self, *needles: bytes) -> bool:
        searched.extend(needles)
        return has(self, *needles)

    monkeypatch.setattr(walls._Response, "has", counting)
    page = b"<html><head><title>Prices</title></head><body>" + b"<p>words</p>" * 4000
    assert wall_of(200, {"Server": "nginx", "Content-Type": "text/html"}, page) is None
    assert len(searched) <= 12

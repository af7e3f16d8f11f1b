"""Fuzzing the bot-wall detector (auditor/http/walls.py).

Properties:

- any bytes with any headers and status give a Wall or None, never an exception, in
  time linear in the probe (64 KiB), whatever repeats in them;
- a vendor's wall stays named whatever the page around its tells: mutated, cut after
  its tells, padded, or with its bytes' case changed;
- an article page (the evidence fuzzer's, with its structured data, its noise and
  boilerplate) is never a wall, at 200 or 404, with a bot manager's headers or not.
"""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from auditor.http.walls import WALL_PROBE_BYTES, html_kind, wall_of
from tests.fuzz.budget import fuzz
from tests.fuzz.mutations import HOSTILE_TOKENS, mutated
from tests.fuzz.pages import pages, render
from tests.loopback import FIXTURES

WALLS = FIXTURES / "walls"
REPEATED = (b"<title", b"<input ", b"<input type=", b"px-captcha", b"a", b"<", b"\x00")
HEADER_NAMES = ("Server", "cf-mitigated", "X-DataDome", "x-amzn-waf-action", "X-Sucuri-ID", "X")
headers = st.dictionaries(st.sampled_from(HEADER_NAMES), st.text(max_size=40), max_size=4)
statuses = st.one_of(st.none(), st.integers(100, 599))


@fuzz(60)
@given(st.binary(max_size=4096), headers, statuses)
def test_any_response_is_a_wall_or_none(body, given_headers, status):
    wall = wall_of(status, given_headers, body)
    assert wall is None or wall.detail()
    assert html_kind(body) in (None, "login", "consent", "error")


@fuzz(20)
@given(st.sampled_from(REPEATED), st.sampled_from(HOSTILE_TOKENS), statuses)
def test_a_hostile_repeat_costs_linear_time(token, tail, status):
    body = (token * (WALL_PROBE_BYTES // len(token) + 1) + tail) * 4  # past the probe
    began = time.perf_counter()
    wall_of(status, {"Server": "cloudflare"}, body)
    html_kind(body[:WALL_PROBE_BYTES])
    assert time.perf_counter() - began < 2.0  # quadratic backtracking takes minutes here


TELLS = {
    "cloudflare-challenge.html": b"window._cf_chl_opt",
    "datadome-captcha.html": b"captcha-delivery.com",
    "perimeterx-captcha.html": b'id="px-captcha"',
    "imperva-incident.html": b"Incapsula incident ID",
}


@fuzz(40)
@given(st.sampled_from(sorted(TELLS)), st.data())
def test_a_vendors_wall_is_named_whatever_surrounds_its_tell(name, data):
    page = (WALLS / name).read_bytes()
    tell = TELLS[name]
    at = page.index(tell)
    before = data.draw(mutated(page[:at]))
    after = data.draw(mutated(page[at + len(tell) :]))
    padding = data.draw(st.binary(max_size=512))
    wall = wall_of(403, {}, padding + before + tell + after)
    assert wall is not None and wall.vendor is not None


@fuzz(40)
@given(pages(), st.sampled_from([200, 404]), st.sampled_from([{}, {"Server": "cloudflare"}]))
def test_an_article_is_never_a_wall(page, status, given_headers):
    assert wall_of(status, given_headers, render(page).encode()) is None

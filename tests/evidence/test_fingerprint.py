"""Fingerprints: boilerplate churn reads as unchanged, an edited paragraph as changed."""

from __future__ import annotations

import random
import string

from hypothesis import given
from hypothesis import strategies as st

from auditor.evidence import simhash_distance
from auditor.evidence.fingerprint import fingerprint_tree, main_text, simhash, structured_hash
from auditor.evidence.page import parse_html
from tests.evidence.helpers import PAGES, read_fixture

TEMPLATE = (PAGES / "noisy-article.template.html").read_text(encoding="utf-8")
PARAGRAPH = (
    "Engineers replaced more than four hundred bolts and resurfaced the whole "
    "carriageway, at a cost of twelve million euros."
)
#: Back-to-back refetches of the noisy template, each with fresh noise.
REFETCHES = 200


def _fingerprint(name: str):
    page = read_fixture(name, url="https://daily.example/city/harbour-bridge-reopens")
    assert page.fingerprint is not None
    return page.fingerprint


def test_same_page_with_fresh_noise_reads_unchanged():
    first, again = _fingerprint("article.html"), _fingerprint("article-refetch.html")
    assert first.exact == again.exact
    assert first.simhash == again.simhash
    assert first.structured == again.structured


def test_an_edited_paragraph_reads_changed_but_similar():
    first, edited = _fingerprint("article.html"), _fingerprint("article-edited.html")
    assert first.exact != edited.exact
    assert 0 < simhash_distance(first.simhash, edited.simhash) <= 12
    assert first.structured == edited.structured


def test_boilerplate_is_left_out():
    text = main_text(parse_html((PAGES / "article.html").read_bytes()))
    assert "twelve million euros" in text
    for noise in ("cookies", "advertisement", "sponsored", "read next", "most read",
                  "newsletter", "comments", "mastodon", "weather", "generated at"):  # fmt: skip
        assert noise not in text, noise


def _noisy_fill(rng: random.Random) -> bytes:
    def token(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    values = {
        "csrf": token(40),
        "rendered": f"2026-11-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
        f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z",
        "request_id": token(32, "0123456789abcdef"),
        "ad_id": str(rng.randint(10**9, 10**10)),
        "weather": f"{rng.randint(-5, 30)}°C",
        "network": rng.choice(["Mastodon", "Bluesky", "Facebook"]),
        "shares": str(rng.randint(0, 999)),
        "ad_text": token(12),
        "minutes": str(rng.randint(1, 59)),
        "related": "".join(f"<li><a href='/{token(5)}'>{token(20)}</a></li>" for _ in range(3)),
        "comments": str(rng.randint(0, 99)),
        "comment": token(30),
        "render_ms": str(rng.randint(5, 900)),
        "paragraph": PARAGRAPH,
    }
    html = TEMPLATE
    for key, value in values.items():
        html = html.replace("{{" + key + "}}", value)
    return html.encode("utf-8")


def test_false_change_rate_on_back_to_back_refetches():
    rng = random.Random(4)
    first = fingerprint_tree(parse_html(_noisy_fill(rng))).exact
    false_changes = sum(
        fingerprint_tree(parse_html(_noisy_fill(rng))).exact != first for _ in range(REFETCHES)
    )
    assert false_changes / REFETCHES <= 0.01
    assert false_changes == 0  # measured: 0 of 200


def test_root_falls_back_from_an_empty_main_and_a_teaser_article():
    html = b"""<html><body><main></main><article class="teaser">Other story</article>
    <div class="story"><p>The real story is long enough to be the content of this page,
    with several sentences of text that a reader came for.</p></div></body></html>"""
    text = main_text(parse_html(html))
    assert "the real story" in text


def test_boilerplate_holding_most_of_the_page_is_kept():
    # ASP.NET wraps the whole page in a form; WordPress tags posts 'post-share-style2'.
    html = b"""<html><body><form id="aspnetForm"><article class="post thb-post-share-style2">
    <p>All of the content lives inside a form and a share-tagged article.</p>
    </article><div class="share-bar">Share</div></form></body></html>"""
    text = main_text(parse_html(html))
    assert "all of the content lives inside" in text
    assert "share" not in text.replace("share-tagged", "")


def test_header_inside_the_article_is_content():
    html = b"""<html><body><header>Site name</header><article><header><h1>Headline</h1>
    </header><p>Body text of the article itself.</p></article></body></html>"""
    text = main_text(parse_html(html))
    assert text.startswith("headline")
    assert "site name" not in text


def test_cjk_characters_count_as_words():
    page = parse_html("<html><body><p>東京都は新しい橋を開通した</p></body></html>".encode())
    assert fingerprint_tree(page).words == 13


def test_structured_hash_ignores_dates_and_counters():
    a = [{"@type": "Article", "headline": "H", "dateModified": "2020", "commentCount": 3}]
    b = [{"@type": "Article", "headline": "H", "dateModified": "2021", "commentCount": 9}]
    c = [{"@type": "Article", "headline": "Other", "dateModified": "2020"}]
    assert structured_hash(a) == structured_hash(b) != structured_hash(c)


WORDS = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), max_size=60)


@given(WORDS, WORDS)
def test_simhash_distance_is_a_symmetric_bit_count(a, b):
    ha, hb = simhash(a), simhash(b)
    assert 0 <= ha < 2**64
    assert simhash_distance(ha, hb) == simhash_distance(hb, ha)
    assert 0 <= simhash_distance(ha, hb) <= 64
    assert simhash_distance(ha, simhash(list(a))) == 0

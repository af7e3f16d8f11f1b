"""The change threshold on real pages (the shared corpus's ``html/fundus``, skipped when absent).

A page changed when its main content's words changed, however few (docs of
:mod:`auditor.evidence.change`). On 110 real news pages from 30+ countries: a
one-letter typo fix in any paragraph of the main text reads as a change, and the share
of words it touches shows how low any threshold would have to be to keep it; a
counter or a clock time moving inside the article reads as no change, and so does an
edit of the page frame outside the content root.
"""

from __future__ import annotations

import csv
import gzip
import random
import statistics
from pathlib import Path

import pytest
from lxml import etree

from auditor.evidence.change import compare_blocks
from auditor.evidence.page import parse_html
from auditor.evidence.segment import cut_blocks, cut_blocks_with_text
from auditor.evidence.text import content_root, normalise

HERE = Path(__file__).resolve()
#: The corpus beside the checkout, or beside a worktree's parent.
CORPUS = next(
    (p / "shared" / "corpus" for p in HERE.parents[3:5] if (p / "shared" / "corpus").is_dir()),
    None,
)


@pytest.fixture(scope="module")
def pages() -> list[tuple[str, bytes]]:
    if CORPUS is None:
        pytest.skip("corpus not present beside the checkout")
    with (CORPUS / "fundus_pages_gold.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [(r["url"], gzip.decompress((CORPUS / r["local_file"]).read_bytes())) for r in rows]


def _blocks(tree: etree._Element):
    return cut_blocks(tree, content_root(tree))


def _content_paragraphs(tree: etree._Element) -> list[etree._Element]:
    """``<p>`` elements whose whole text is one content block of eight words or more."""
    content = {text for block, text in cut_blocks_with_text(tree, content_root(tree))
               if block.content and block.tokens >= 8}  # fmt: skip
    found = []
    for p in tree.iter("p"):
        if len(p) == 0 and p.text and normalise(p.text) in content:
            found.append(p)
    return found


def _typo(text: str, rng: random.Random) -> str:
    parts = text.split(" ")
    words = [i for i, w in enumerate(parts) if _typo_able(w)]
    i = rng.choice(words)
    word = parts[i]
    parts[i] = word[:2] + word[3] + word[2] + word[4:]  # two letters swapped
    return " ".join(parts)


def _typo_able(word: str) -> bool:
    """A word whose third and fourth letters differ (swapped, they make a typo)."""
    return len(word) >= 5 and word.isalpha() and word[2].lower() != word[3].lower()


def test_a_one_letter_typo_fix_reads_as_a_change_on_real_pages(pages):
    rng = random.Random(11)
    shares, tried = [], 0
    for _, html in pages:
        tree = parse_html(html)
        candidates = [
            p for p in _content_paragraphs(tree) if any(map(_typo_able, p.text.split(" ")))
        ]
        if not candidates:
            continue
        before = _blocks(tree)
        paragraph = rng.choice(candidates)
        paragraph.text = _typo(paragraph.text, rng)
        change = compare_blocks(before, _blocks(tree))
        tried += 1
        assert change.changed, paragraph.text
        assert change.summary.startswith("1 paragraph edited")
        shares.append(change.share)
    assert tried >= 80
    print(
        f"\ntypo fixes on {tried} real pages: all read as change; share of words touched "
        f"min {min(shares):.4f}, median {statistics.median(shares):.4f}"
    )
    assert min(shares) < 0.01  # a share threshold of 1% would already miss some


NOISE = (
    "14 comments · 2,301 views · updated 10:42 · 3 days ago",
    "15 comments · 2,950 views · updated 11:07 · 4 days ago",
)


def test_counters_and_clock_times_inside_the_article_are_no_change(pages):
    changed = 0
    for _, html in pages:
        tree = parse_html(html)
        paragraphs = _content_paragraphs(tree)
        if not paragraphs:
            continue
        before = _blocks(tree)
        target = paragraphs[0]
        target.text += f" {NOISE[0]}"
        first = _blocks(tree)
        target.text = target.text.replace(NOISE[0], NOISE[1])
        changed += compare_blocks(first, _blocks(tree)).changed
        assert compare_blocks(before, first).changed  # the words "updated ago" are new
    assert changed == 0


def test_a_frame_edit_outside_the_content_root_is_no_change(pages):
    tried = 0
    for _, html in pages:
        tree = parse_html(html)
        root = content_root(tree)
        body = tree.find("body")
        if root is body or body is None:
            continue
        inside = set(root.iter())
        outside = [e for e in body.iter() if isinstance(e.tag, str) and e not in inside
                   and e.tag not in ("script", "style") and (e.text or "").strip()]  # fmt: skip
        if not outside:
            continue
        before = _blocks(tree)
        outside[-1].text = "© 2027 " + outside[-1].text  # the footer-most text of the frame
        outside[0].text = outside[0].text + " New menu entry"
        change = compare_blocks(before, _blocks(tree))
        tried += 1
        assert not change.changed, change.summary
    assert tried >= 50

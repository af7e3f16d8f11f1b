"""Block fingerprints: a page cut into blocks, each marked with where it sits, kept compact."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from auditor.evidence.blocks import (
    BLOCKS_VERSION,
    Block,
    block_count,
    decode_blocks,
    encode_blocks,
)
from auditor.evidence.fingerprint import fingerprint_tree
from auditor.evidence.page import parse_html
from auditor.evidence.segment import MAX_BLOCKS, cut_blocks, cut_blocks_with_text
from auditor.evidence.text import BOILERPLATE_WORDS, content_root
from tests.evidence.helpers import PAGES

#: article.html's exact hash before blocks existed: an upgrade must not read as change.
ARTICLE_EXACT = "64a7b57689d9ba30f598506712c317c04d83e158a1023bad44265874ea19fad8"


def _cut(html: str | bytes) -> list[tuple[Block, str]]:
    tree = parse_html(html.encode() if isinstance(html, str) else html)
    return cut_blocks_with_text(tree, content_root(tree))


def _content(html: str | bytes) -> list[str]:
    return [text for block, text in _cut(html) if block.content]


def _page(body: str) -> str:
    return f"<html><body>{body}</body></html>"


def test_the_article_body_is_content_and_the_frame_is_not():
    blocks = _cut((PAGES / "article.html").read_bytes())
    content = [text for block, text in blocks if block.content]
    frame = {text: block.region_name for block, text in blocks if not block.content}

    assert content[0] == "harbour bridge reopens after repairs"
    assert any("twelve million euros" in text for text in content)
    assert frame["we use cookies."] == "notice"
    assert frame["advertisement"] == "ads"
    assert frame["share on mastodon"] == "share bar"
    assert frame["finally!"] == "comments"
    assert frame["sign up to the newsletter"] == "form"
    assert frame["most read"] == "sidebar"
    assert frame["read next"] == "related links"
    assert next(t for t in frame if t.startswith("©")) and "footer" in frame.values()
    assert {b.region_name for b, _ in blocks if b.content} == {"article body"}


def test_the_fingerprint_keeps_its_exact_hash_and_gains_blocks():
    fp = fingerprint_tree(parse_html((PAGES / "article.html").read_bytes()))
    assert fp.exact == ARTICLE_EXACT
    assert block_count(fp.blocks) == len(decode_blocks(fp.blocks)) == 22
    assert fp.to_dict()["blocks"] == 22
    assert fp.to_dict()["blocks_version"] == BLOCKS_VERSION


def test_blocks_split_on_block_tags_and_br_not_on_inline_tags():
    texts = _content(
        _page("<div>One <b>bold</b> word<br>next line<p>para <i>graph</i></p>tail</div>")
    )
    assert texts == ["one bold word", "next line", "para graph", "tail"]


def test_scripts_styles_and_comments_leave_no_text_but_their_tails_stay():
    texts = _content(_page("<p>a<script>var x = 1;</script>b<!-- note -->c<style>p{}</style>d</p>"))
    assert texts == ["a b c d"]


def test_counters_and_relative_times_are_neutralised():
    before = _page("<p>Posted by Ann · 12 comments · 1,234 views · 3 days ago · 5 min read</p>")
    after = _page("<p>Posted by Ann · 13 comments · 1,301 views · 4 days ago · 5 min read</p>")
    (first,), (second,) = _cut(before), _cut(after)
    assert first[0].hash == second[0].hash
    assert first[1] == "posted by ann · · · ·"


def test_previous_and_next_links_are_navigation():
    html = _page(
        "<article><p>Body text of the post, long enough to be the content.</p>"
        '<div><a rel="prev" href="/a">Older: the first post</a></div>'
        '<div class="nav-links"><a href="/c">Newer post</a></div></article>'
    )
    blocks = {text: block for block, text in _cut(html)}
    assert blocks["body text of the post, long enough to be the content."].content
    assert blocks["older: the first post"].region_name == "navigation"
    assert blocks["newer post"].region_name == "navigation"
    assert not blocks["older: the first post"].content


def test_a_list_of_links_is_link_dense_and_prose_with_a_link_is_not():
    html = _page(
        '<main><ul><li><a href="/x">Another story</a></li></ul>'
        '<p>Read the <a href="/r">full report</a> before the meeting on Monday.</p></main>'
    )
    blocks = {text: block for block, text in _cut(html)}
    assert blocks["another story"].links and not blocks["another story"].content
    assert blocks["read the full report before the meeting on monday."].content


def test_numbers_are_kept_with_the_word_before_them():
    ((block, _),) = _cut(_page("<p>Price: €19.90, was 24,90 in June 2025.</p>"))
    assert block.numbers == (
        ("price", "19.90", ""),
        ("was", "24,90", "in"),
        ("june", "2025", ""),
    )


def test_a_block_with_many_numbers_keeps_none():
    ((block, _),) = _cut(_page("<p>" + " ".join(str(n) for n in range(20)) + "</p>"))
    assert block.numbers == ()


def test_outside_the_content_root_nothing_is_content():
    html = _page(
        "<div class='menu'><p>Home</p><p>About us and our long history</p></div>"
        "<main><p>" + "The real content of this page. " * 5 + "</p></main>"
    )
    blocks = _cut(html)
    assert [t.count("real content") for b, t in blocks if b.content] == [5]
    assert not any(b.in_root for b, t in blocks if t == "home")


def test_a_new_theme_with_the_same_words_sums_to_the_same_bag():
    v1 = _page("<main><p>First part.<br><br>Second part of it.</p><p>Third.</p></main>")
    v2 = _page(
        "<main><div class='x'><div>First part.</div></div><section><p>Second part"
        " <em>of it.</em> Third.</p></section></main>"
    )
    first, second = _cut(v1), _cut(v2)
    assert [b.hash for b, _ in first] != [b.hash for b, _ in second]
    assert sum(b.bag for b, _ in first) % 2**32 == sum(b.bag for b, _ in second) % 2**32


def test_blocks_past_the_cap_fold_into_the_last_and_still_show_an_edit():
    paragraphs = [f"<p>paragraph number {n} says something</p>" for n in range(MAX_BLOCKS + 500)]
    edited = list(paragraphs)
    edited[-10] = "<p>paragraph number edited says something else</p>"
    first = cut_blocks(tree := parse_html(_page("".join(paragraphs)).encode()), content_root(tree))
    second = cut_blocks(tree := parse_html(_page("".join(edited)).encode()), content_root(tree))
    assert len(first) == len(second) == MAX_BLOCKS
    assert first[:-1] == second[:-1] and first[-1].hash != second[-1].hash
    assert first[-1].tokens == 501 * 5  # the last 501 paragraphs, 5 words each


def test_text_past_the_pending_cap_is_read_in_one_piece_and_still_shows_an_edit():
    count = 2 * MAX_BLOCKS + 300  # past the blocks read one by one
    paragraphs = [f"<p>line {n} at 10:{n % 60:02d}</p>" for n in range(count)]
    edited = [*paragraphs[:-5], "<p>line edited</p>", *paragraphs[-4:]]
    retimed = [p.replace(" at 10:", " at 11:") for p in paragraphs]  # clock times: noise
    trees = [parse_html(_page("".join(v)).encode()) for v in (paragraphs, edited, retimed)]
    first, second, third = [cut_blocks(t, content_root(t)) for t in trees]
    assert len(first) == MAX_BLOCKS and first[-1].tokens == (count - MAX_BLOCKS + 1) * 3
    assert first[-1].hash != second[-1].hash
    assert first[-1].hash == third[-1].hash


def test_every_fingerprint_boilerplate_word_has_a_region():
    from auditor.evidence.segment import _WORD_REGION

    assert _WORD_REGION.keys() >= BOILERPLATE_WORDS


BLOCKS = st.lists(
    st.builds(
        Block,
        hash=st.integers(0, 2**32 - 1),
        bag=st.integers(0, 2**32 - 1),
        tokens=st.integers(0, 2**16 - 1),
        path=st.integers(0, 2**16 - 1),
        region=st.integers(0, 12),
        tag=st.integers(0, 6),
        flags=st.integers(0, 7),
        numbers=st.lists(
            st.tuples(st.text(max_size=30), st.text(max_size=30), st.text(max_size=30)),
            max_size=6,
        ).map(tuple),
        marks=st.none() | st.integers(0, 2**32 - 1),
        case=st.none() | st.integers(0, 2**16 - 1),
    ),
    max_size=30,
)


@given(BLOCKS)
def test_encoding_round_trips(blocks):
    data = encode_blocks(blocks)
    back = decode_blocks(data)
    assert [b.hash for b in back] == [b.hash for b in blocks]
    assert [(b.bag, b.tokens, b.path, b.region, b.tag, b.flags, b.marks) for b in back] == [
        (b.bag, b.tokens, b.path, b.region, b.tag, b.flags, b.marks) for b in blocks
    ]
    for got, sent in zip(back, blocks, strict=True):
        for got_words, sent_words in zip(got.numbers, sent.numbers, strict=True):
            for word, word0 in zip(got_words, sent_words, strict=True):
                assert word0.startswith(word)


@given(BLOCKS, st.integers(0, 400))
def test_cut_or_foreign_bytes_decode_to_nothing_never_an_error(blocks, cut):
    data = encode_blocks(blocks)
    assert decode_blocks(data[:cut]) in ((), decode_blocks(data))
    assert decode_blocks(encode_blocks(blocks, version=BLOCKS_VERSION + 1)) == ()
    assert decode_blocks(None) == decode_blocks(b"") == ()


@given(BLOCKS)
def test_blocks_of_version_1_are_still_read_without_marks(blocks):
    """Stored before code blocks kept their punctuation: compared on words, as then."""
    back = decode_blocks(encode_blocks(blocks, version=1))
    assert [(b.hash, b.bag, b.tokens, b.marks, b.case) for b in back] == [
        (b.hash, b.bag, b.tokens, None, None) for b in blocks
    ]


def test_only_code_blocks_keep_their_punctuation():
    cut = _cut(_page("<main><p>Call it, then: done.</p><pre>f(a, [b])</pre></main>"))
    assert [(block.tag_name, block.marks is not None) for block, _ in cut] == [
        ("paragraph", False),
        ("code block", True),
    ]


def test_the_page_summary_counts_the_blocks():
    from auditor.evidence.summary import summarize
    from tests.evidence.helpers import read_fixture

    text = summarize(read_fixture("article.html"))
    assert "  blocks:         22 (7 of the main content)" in text.splitlines()


def test_a_block_keeps_its_words_case_beside_the_case_folded_hash():
    """``hash`` and ``bag`` stay case-folded (identity across versions and pages); ``case``
    is what the words' case adds, so "Thesis title" → "Thesis Title" can be told."""
    ((first, _),) = _cut(_page("<h2>Thesis title of the year</h2>"))
    ((second, _),) = _cut(_page("<h2>Thesis Title of the Year</h2>"))
    assert (first.hash, first.bag, first.tokens) == (second.hash, second.bag, second.tokens)
    assert None not in (first.case, second.case) and first.case != second.case
    ((lower, _),) = _cut(_page("<p>all of it in lower case</p>"))
    assert lower.case == 0  # nothing casefold changes: no second pass, no bytes


def test_the_case_pass_removes_the_same_volatile_tokens_and_counters():
    before = _page("<p>Updated 10:30 AM by Ann · ID 3F2A9C0D11B4E5F6A7 · 12 Comments</p>")
    after = _page("<p>Updated 11:45 PM by Ann · ID 9D8C7B6A5F4E3D2C1B · 13 Comments</p>")
    ((first, _),) = _cut(before)
    ((second, _),) = _cut(after)
    assert first.hash == second.hash and first.case == second.case != 0


def test_a_list_of_links_in_the_root_keeps_its_numbers():
    ((block, _),) = _cut(_page('<main><ul><li><a href="/f">foo-5.1.0.tar.gz</a></li></ul></main>'))
    assert block.links and block.numbers == (("foo", "5.1.0", ""),)


def test_case_is_stored_only_where_it_adds_something():
    plain = Block(1, 2, 3, 4, 1, 1, 1)
    same = decode_blocks(encode_blocks([plain, Block(1, 2, 3, 4, 1, 1, 1, case=0)]))
    assert [b.case for b in same] == [0, 0]  # read at version 3: nothing stored means none
    assert len(encode_blocks([Block(1, 2, 3, 4, 1, 1, 1, case=0)])) == len(encode_blocks([plain]))
    assert (
        len(encode_blocks([Block(1, 2, 3, 4, 1, 1, 1, case=9)])) == len(encode_blocks([plain])) + 2
    )


@given(BLOCKS)
def test_blocks_of_version_3_round_trip_with_their_case(blocks):
    back = decode_blocks(encode_blocks(blocks))
    assert BLOCKS_VERSION == 3
    assert [(b.hash, b.bag, b.marks, b.case) for b in back] == [
        (b.hash, b.bag, b.marks, b.case or 0) for b in blocks
    ]


@given(BLOCKS)
def test_blocks_of_version_2_are_still_read_without_their_case(blocks):
    """Stored before blocks kept their case: their case is unknown, never "changed"."""
    back = decode_blocks(encode_blocks(blocks, version=2))
    assert [(b.hash, b.bag, b.tokens, b.marks, b.case) for b in back] == [
        (b.hash, b.bag, b.tokens, b.marks, None) for b in blocks
    ]

"""Small real edits are changes: numbers edited in a list of links (a download table's file
names), words whose case changed; what every page shares, page frame, markup alone and a
rotating list of other pages' titles stay excused (issue 31, items 1 and 4)."""

from __future__ import annotations

from dataclasses import replace

from auditor.evidence.blocks import Block, decode_blocks, encode_blocks
from auditor.evidence.change import compare_blocks
from auditor.evidence.fingerprint import fingerprint_tree
from auditor.evidence.page import parse_html
from auditor.evidence.runs import Fetch, compare_runs
from auditor.evidence.segment import cut_blocks
from auditor.evidence.text import content_root

PROSE = [
    "The harbour bridge reopened to traffic on Friday morning after eight months of repairs.",
    "Engineers replaced more than four hundred bolts and resurfaced the whole carriageway.",
    "Cyclists will have a separate lane from next spring, once the railing is finished.",
]


def page(
    prose: list[str] = PROSE, *, title: str = "Harbour bridge reopens", extra: str = ""
) -> str:
    body = "".join(f"<p>{p}</p>" for p in prose)
    return (
        "<html><body><header>The Daily Example</header>"
        f"<main><article><h1>{title}</h1>{body}{extra}</article></main>"
        "<footer>© 2025 The Daily Example</footer></body></html>"
    )


def blocks(html: str) -> list[Block]:
    tree = parse_html(html.encode())
    return cut_blocks(tree, content_root(tree))


def change(before: str, after: str):
    return compare_blocks(blocks(before), blocks(after))


def files(version: str) -> str:
    rows = "".join(
        f'<tr><td>{system}</td><td><a href="/f/foo-{version}-{system}.tar.gz">'
        f"foo-{version}-{system}.tar.gz</a></td></tr>"
        for system in ("linux", "macos", "windows", "bsd")
    )
    return f"<h2>Files</h2><table>{rows}</table>"


def related(titles: list[str]) -> str:
    entries = "".join(f'<li><a href="/{n}">{t}</a></li>' for n, t in enumerate(titles))
    return f"<div class='more'><h3>More stories</h3><ul>{entries}</ul></div>"


def test_numbers_edited_in_a_list_of_links_on_a_prose_page_are_a_change():
    result = change(page(extra=files("5.1.0")), page(extra=files("5.3.0")))
    assert result.changed and result.summary == "4 table cells edited in the article body"
    assert 0 < result.share < 0.5


def test_one_link_edited_is_named_with_its_numbers():
    before = page(extra="<ul><li><a href='/d'>Download foo 5.1.0</a></li></ul>")
    after = page(extra="<ul><li><a href='/d'>Download foo 5.3.0</a></li></ul>")
    result = change(before, after)
    assert result.changed and result.summary == "foo 5.1.0 → 5.3.0 in the article body"


def test_a_list_of_other_pages_replaced_by_others_is_still_no_change():
    """A prose page's "more stories" box, unmarked, inside the root: its entries are other
    pages' titles, and they rotate when posts are published."""
    before = page(extra=related(["Tram fares rise", "New library opens", "Park reopens"]))
    after = page(extra=related(["Bus lanes open", "Tram fares rise", "Harbour day 2026"]))
    result = change(before, after)
    assert not result.changed and result.summary == "template only: article body"


def test_on_a_listing_page_its_links_are_its_content():
    titles = [f"Story number {n} of the week" for n in range(8)]
    before = page([], title="Archive", extra=related(titles))
    after = page([], title="Archive", extra=related(["A new story of the week", *titles]))
    result = change(before, after)
    assert result.changed and result.summary == "+1 list item in the article body"


def test_a_paragraph_whose_words_changed_case_is_a_change():
    recased = [PROSE[0], PROSE[1].replace("four hundred bolts", "Four Hundred Bolts"), PROSE[2]]
    result = change(page(), page(recased))
    assert result.changed and result.summary == "1 paragraph recapitalised in the article body"
    assert 0 < result.share < 0.5


def test_a_heading_recapitalised_and_a_paragraph_edited_are_both_named():
    edited = [PROSE[0], PROSE[1].replace("four", "five"), PROSE[2]]
    result = change(page(), page(edited, title="Harbour Bridge Reopens"))
    assert result.changed
    assert result.summary == (
        "1 paragraph edited in the article body; 1 heading recapitalised in the article body"
    )


def test_a_link_recapitalised_in_place_is_a_change():
    before = page(extra="<ul><li><a href='/t'>Thesis title</a></li></ul>")
    after = page(extra="<ul><li><a href='/t'>Thesis Title</a></li></ul>")
    assert change(before, after).summary == "1 list item recapitalised in the article body"


def test_the_frame_recapitalised_is_not_a_change():
    after = page().replace("The Daily Example", "THE DAILY EXAMPLE")
    result = change(page(), after)
    assert not result.changed and result.summary == "template only: header, footer"


def test_blocks_re_cut_with_their_case_changed_are_a_change():
    """A new theme joins two paragraphs and an editor recapitalises a word: the words are
    the same case-folded, not with their case."""
    joined = page([f"{PROSE[0]} {PROSE[1]}", PROSE[2]])
    assert not change(page(), joined).changed
    assert change(page(), joined.replace("Engineers", "ENGINEERS")).changed


def test_blocks_stored_without_their_case_compare_without_it():
    """Blocks of version 2 (or 1) against today's: case unknown, compared as before."""
    recased = page(title="Harbour Bridge Reopens")
    for version in (1, 2):
        stored = decode_blocks(encode_blocks(blocks(page()), version=version))
        assert not compare_blocks(stored, blocks(page())).changed
        assert not compare_blocks(stored, blocks(recased)).changed
        assert compare_blocks(stored, blocks(page(PROSE[:2]))).changed


def fetches(htmls: dict[str, str]) -> list[Fetch]:
    out = []
    for key, html in htmls.items():
        fp = fingerprint_tree(parse_html(html.encode()))
        out.append(Fetch(key, "site", fp.exact, fp.simhash, fp.blocks))
    return out


TOPICS = ["bridges", "trams", "buses", "parks", "roads", "rivers", "ports"]


def site(extra: str = "", *, capitals: bool = False) -> dict[str, str]:
    return {
        f"/p{n}": page(
            [f"Story {n} is about {w}.", f"More on {w} tomorrow."],
            title=f"On {w}".upper() if capitals else f"On {w}",
            extra=extra,
        )
        for n, w in enumerate(TOPICS)
    }


def test_across_runs_a_case_only_change_survives_the_equal_main_text_hash():
    old, new = site(), site()
    new["/p2"] = new["/p2"].replace("On buses", "ON BUSES")
    result = compare_runs(fetches(new), fetches(old))
    assert {k for k, c in result.pages.items() if c.changed} == {"/p2"}
    assert result.pages["/p2"].summary == "1 heading recapitalised in the article body"


def test_across_runs_a_theme_recapitalising_every_page_is_no_change():
    """A new theme writes every title in capitals (a template filter, not an editor): the
    same case change in the same slot on most re-fetched pages is the template's."""
    result = compare_runs(fetches(site(capitals=True)), fetches(site()))
    assert not any(c.changed for c in result.pages.values())
    old, new = site(), site(capitals=True)
    new["/p5"] = new["/p5"].replace("More on rivers", "More on the rivers")
    result = compare_runs(fetches(new), fetches(old))
    assert {k for k, c in result.pages.items() if c.changed} == {"/p5"}


def test_across_runs_the_same_link_edit_on_most_pages_is_the_template():
    old = site("<ul><li><a href='/d'>Download foo 5.1.0</a></li></ul>")
    new = site("<ul><li><a href='/d'>Download foo 5.3.0</a></li></ul>")
    new["/p4"] = new["/p4"].replace("More on roads", "More on roads and lanes")
    result = compare_runs(fetches(new), fetches(old))
    assert {k for k, c in result.pages.items() if c.changed} == {"/p4"}


def test_a_v2_fetch_without_link_numbers_against_v3_reads_the_link_edit_as_before():
    """Link blocks stored by version 2 kept no numbers: the first comparison after the
    upgrade cannot tell an edit in place, and reads as it did (no change, no churn)."""
    stored = [
        replace(b, numbers=() if b.links else b.numbers) for b in blocks(page(extra=files("5.1.0")))
    ]
    old = decode_blocks(encode_blocks(stored, version=2))
    assert not compare_blocks(old, blocks(page(extra=files("5.1.0")))).changed
    assert not compare_blocks(old, blocks(page(extra=files("5.3.0")))).changed

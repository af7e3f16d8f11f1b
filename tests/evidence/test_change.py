"""Comparing two fetches of a page, and two runs of a site: template differences are not
content changes, and every real edit is, with its size and place."""

from __future__ import annotations

from auditor.evidence.change import compare_blocks, compare_exact
from auditor.evidence.fingerprint import fingerprint_tree
from auditor.evidence.page import parse_html
from auditor.evidence.runs import Fetch, compare_runs
from auditor.evidence.segment import cut_blocks
from auditor.evidence.template import learn_template
from auditor.evidence.text import content_root

ARTICLE = [
    "The harbour bridge reopened to traffic on Friday morning after eight months of repairs.",
    "Engineers replaced more than four hundred bolts and resurfaced the whole carriageway.",
    "Cyclists will have a separate lane from next spring, once the railing is finished.",
]


def page(
    paragraphs: list[str] = ARTICLE,
    *,
    title: str = "Harbour bridge reopens",
    footer: str = "© 2024 The Daily Example",
    sidebar: list[str] = ("Tram fares rise", "New library opens"),
    extra: str = "",
    main: bool = True,
) -> str:
    """A small page: header, article, an unmarked sidebar list, a footer."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    article = f"<article><h1>{title}</h1>{body}{extra}</article>"
    side = "<div class='col'><h3>Recent</h3><ul>" + "".join(
        f"<li>{s}</li>" for s in sidebar
    ) + "</ul></div>"  # fmt: skip
    content = f"<main>{article}</main>" if main else f"<div id='content'>{article}</div>"
    frame = f"<header>The Daily Example</header>{content}{side}<footer>{footer}</footer>"
    return f"<html><body>{frame}</body></html>"


def blocks(html: str):
    tree = parse_html(html.encode())
    return cut_blocks(tree, content_root(tree))


def change(before: str, after: str, template=frozenset()):
    return compare_blocks(blocks(before), blocks(after), template)


def test_the_same_page_is_unchanged():
    result = change(page(), page())
    assert (result.changed, result.share, result.summary) == (False, 0.0, "unchanged")
    assert not result.template_changed


def test_a_typo_fix_is_a_change_of_one_paragraph():
    fixed = [ARTICLE[0], ARTICLE[1].replace("four hundred", "four hunderd"), ARTICLE[2]]
    result = change(page(fixed), page())
    assert result.changed
    assert result.summary == "1 paragraph edited in the article body"
    assert 0 < result.share < 0.5


def test_added_paragraphs_are_counted_and_placed():
    more = [*ARTICLE, "The mayor cut the ribbon at nine.", "Traffic was light all day."]
    result = change(page(), page(more))
    assert result.changed and result.summary == "+2 paragraphs in the article body"


def test_a_removed_section_is_counted():
    extra = "<h2>Costs</h2><p>The works cost twelve million euros, more than planned.</p>"
    result = change(page(extra=extra), page())
    assert result.changed and result.summary == "-1 heading, 1 paragraph in the article body"


def test_a_price_change_is_named_with_its_numbers():
    before = page([*ARTICLE, "Price: 19.90 euros a month."])
    after = page([*ARTICLE, "Price: 24.90 euros a month."])
    result = change(before, after)
    assert result.changed and result.summary == "price 19.90 → 24.90 euros in the article body"


def test_a_footer_and_sidebar_outside_main_are_template_only():
    after = page(footer="© 2025 The Daily Example", sidebar=["Bus lanes open", "Tram fares rise"])
    result = change(page(), after)
    assert not result.changed
    assert result.summary == "template only: page body, footer"
    assert result.template_regions == ("page body", "footer")


def docs_page(menu: list[str], text: str = "Install with pip.") -> str:
    """A short documentation page: its <main> holds under a tenth of the body's text, so
    the content root falls back to <body>, and an unmarked menu sits beside it."""
    items = "".join(f"<li><span>{entry}</span></li>" for entry in menu)
    menu_div = f"<div class='md-menu'><ul>{items}</ul></div>"
    return f"<html><body>{menu_div}<main><p>{text}</p></main></body></html>"


MENU = [f"Chapter {n}: {topic}" for n, topic in enumerate("abcdefghijklmnopqrstuvwxyz")]


def test_with_body_as_root_a_menu_entry_reads_as_change_unless_it_is_template():
    before, after = docs_page(MENU), docs_page([*MENU, "Chapter 27: appendix"])
    tree = parse_html(before.encode())
    assert content_root(tree).tag == "body"
    assert change(before, after).changed  # one page alone: nothing to learn a template from
    learned = learn_template([blocks(docs_page([*MENU, "Chapter 27: appendix"], t)) for t in "xyz"])
    result = change(before, after, learned.hashes)
    assert not result.changed and result.template_regions == ("page body",)


def test_a_new_theme_with_the_same_words_is_unchanged():
    v2 = page().replace("<p>", "<div class='para'><span>").replace("</p>", "</span></div>")
    v2 = v2.replace("<h1>", "<div class='title'><h2>").replace("</h1>", "</h2></div>")
    result = change(page(), v2)
    assert not result.changed
    assert result.summary.startswith("same words, new markup") or result.summary == "unchanged"


def test_the_whole_text_fallback():
    assert compare_exact("a", "a").changed is False
    assert compare_exact("a", "b").changed and compare_exact("a", "b").method == "exact"


def test_template_learning_needs_three_pages_and_a_third_of_them():
    pages = [blocks(page(title=f"Story {n}", paragraphs=[f"Text {n} " * 5])) for n in range(10)]
    template = learn_template(pages)
    footer = next(b.hash for b in pages[0] if b.region_name == "footer")
    title = next(b.hash for b in pages[0] if b.tag_name == "heading")
    assert footer in template and title not in template
    assert footer not in learn_template(pages[:2])


def test_a_value_shared_by_a_third_of_pages_in_a_varying_slot_is_not_template():
    prices = ["19.90"] * 4 + ["24.90", "9.90", "12.00", "5.00", "7.50", "30.00"]
    pages = [blocks(page(paragraphs=[f"Price {p}", f"Product {n}"])) for n, p in enumerate(prices)]
    price = next(b.hash for b in pages[0] if b.numbers)
    assert price not in learn_template(pages)


def fetches(htmls: dict[str, str], group: str = "blog") -> list[Fetch]:
    out = []
    for key, html in htmls.items():
        fp = fingerprint_tree(parse_html(html.encode()))
        out.append(Fetch(key, group, fp.exact, fp.simhash, fp.blocks))
    return out


def site(**kwargs) -> dict[str, str]:
    return {
        f"/p{n}": page(title=f"Story {n}", paragraphs=[f"Story {n} is about {w}."] * 2, **kwargs)
        for n, w in enumerate(["bridges", "trams", "buses", "parks", "roads", "rivers", "ports"])
    }


def test_across_runs_a_template_edit_on_every_page_is_one_template_change():
    old = site(main=False)
    new = site(main=False, footer="© 2025 The Daily Example", sidebar=["Bus lanes", "Tram fares"])
    new["/p3"] = new["/p3"].replace("about parks.", "about parks and gardens.")
    result = compare_runs(fetches(new), fetches(old))

    changed = {key for key, c in result.pages.items() if c.changed}
    assert changed == {"/p3"}
    assert result.pages["/p3"].summary == "2 paragraphs edited in the article body"
    assert result.pages["/p0"].summary.startswith("template only")
    assert result.template is not None and result.template.pages == 7
    assert set(result.template.regions) == {"footer", "page body"}
    assert "template changed between runs: " in result.template.detail()
    assert result.distances["/p3"] > 0


def test_the_same_block_added_to_most_pages_is_a_template_change():
    old = site()
    new = {k: v.replace("</article>", "<p>Subscribe to our weekly letter today.</p></article>")
           for k, v in site().items()}  # fmt: skip
    new.pop("/p6")  # learned from the new run, it would be template; shown on most pairs anyway
    result = compare_runs(fetches(new), fetches(old))
    assert not any(c.changed for c in result.pages.values())


def test_pages_without_blocks_fall_back_to_the_whole_text_hash():
    old = [Fetch(f.key, f.group, f.exact, f.simhash, None) for f in fetches(site())]
    new = fetches(site(footer="© 2025"))
    result = compare_runs(new, old)
    assert {c.method for c in result.pages.values()} == {"exact"}
    assert not any(c.changed for c in result.pages.values())  # the footer is not main text


def test_across_runs_a_menu_entry_on_short_docs_pages_is_template():
    texts = ["Install with pip.", "Run the tests.", "Read the changelog.", "Report a bug."]
    old = {f"/d{n}": docs_page(MENU, t) for n, t in enumerate(texts)}
    new = {f"/d{n}": docs_page([*MENU, "Chapter 27: appendix"], t) for n, t in enumerate(texts)}
    new["/d1"] = docs_page([*MENU, "Chapter 27: appendix"], "Run the tests with pytest.")
    result = compare_runs(fetches(new, "docs"), fetches(old, "docs"))
    assert {k for k, c in result.pages.items() if c.changed} == {"/d1"}
    assert result.template is not None and result.template.regions == ("page body",)


def test_a_long_repetitive_difference_is_told_by_counts_not_aligned():
    from auditor.evidence.blocks import Block
    from auditor.evidence.change import MAX_ALIGNED

    def repeated(kinds: int) -> list[Block]:  # aligning these is quadratic: minutes at 2,000
        return [Block(n % kinds, n % kinds, 4, 1, 1, 1, 1) for n in range(2_000)]

    result = compare_blocks(repeated(3), repeated(4))
    assert result.changed and MAX_ALIGNED < 2_000
    assert result.summary == "-500 paragraphs, +500 paragraphs in the article body"


def test_a_block_near_the_template_bar_in_both_runs_is_still_content():
    shared = "<p>Members of the club get a discount on every tool in the shop.</p>"

    def pages(with_shared: set[int]) -> dict[str, str]:
        return {
            f"/t{n}": page(
                title=f"Tool {n}",
                paragraphs=[f"Tool {n} is a {w} for the garden, sold by the piece."],
                extra=shared if n in with_shared else "",
            )
            for n, w in enumerate(
                ["spade", "rake", "hoe", "fork", "trowel", "shears", "saw", "pump", "hose", "can"]
            )
        }

    old = pages({0, 1, 2, 3, 4, 5})  # 6 of 10, filling its slot: template in the first run
    new = pages({0, 1, 2, 3})  # two pages dropped it: 4 of 10 now, under the slot bar
    result = compare_runs(fetches(new), fetches(old))
    assert {k for k, c in result.pages.items() if c.changed} == {"/t4", "/t5"}
    assert result.pages["/t4"].summary == "-1 paragraph in the article body"


def docusaurus_page(paragraphs: list[str]) -> str:
    """A Docusaurus 3 doc page's shape: the body itself carries a class naming navigation
    (``navigation-with-keyboard``), the doc sits in main > article."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        "<html><body class='navigation-with-keyboard'><div class='main-wrapper'>"
        "<nav class='navbar'><a href='/docs'>Docs</a></nav><main class='docMainContainer'>"
        f"<article><div class='theme-doc-markdown markdown'><h1>Secrets</h1>{body}</div>"
        "</article></main></div><footer>© 2025 Example</footer></body></html>"
    )


def test_a_frame_word_on_an_ancestor_of_the_content_root_leaves_the_content_content():
    """linode/apl-docs (Docusaurus 3.7) showed it: ``<body class="navigation-with-keyboard">``
    made every block of every page navigation, so 9 edited docs of 9 read as template only."""
    edited = [ARTICLE[0], ARTICLE[1].replace("four hundred", "five hundred"), ARTICLE[2]]
    before, after = docusaurus_page(ARTICLE), docusaurus_page(edited)
    assert [b.region_name for b in blocks(before) if b.tag_name == "paragraph"] == [
        "article body"
    ] * 3
    result = change(before, after)
    assert result.changed and result.summary == "1 paragraph edited in the article body"


def test_a_page_quoting_the_footer_changes_when_its_own_copy_changes():
    """facelessuser/pymdown-extensions (MkDocs Material) showed it: the licence page's
    "Copyright © 2014 - 2024 Isaac Muse" paragraph is the footer's text; the year moved in
    both, and the licence page's own edit was read as template only."""
    old = site(footer="Copyright © 2014 - 2024 Isaac Muse")
    new = site(footer="Copyright © 2014 - 2025 Isaac Muse")
    old["/p2"] = old["/p2"].replace(
        "about buses.</p>", "about buses.</p><p>Copyright © 2014 - 2024 Isaac Muse</p>", 1
    )
    new["/p2"] = new["/p2"].replace(
        "about buses.</p>", "about buses.</p><p>Copyright © 2014 - 2025 Isaac Muse</p>", 1
    )
    result = compare_runs(fetches(new), fetches(old))
    assert {k for k, c in result.pages.items() if c.changed} == {"/p2"}
    assert result.pages["/p2"].summary.startswith("2024 → 2025")
    assert result.template is not None and "footer" in result.template.regions


def test_a_post_whose_title_every_page_lists_changes_when_its_title_changes():
    """The same shape on blogs: a post's own heading is also an entry of the recent-posts
    box on every page; renaming the post changes the box everywhere (template) and the
    post's heading (content)."""
    titles = ["Bridges", "Trams", "Buses", "Parks", "Roads", "Rivers"]

    def pages(renamed: str) -> dict[str, str]:
        names = [renamed if t == "Buses" else t for t in titles]
        return {
            f"/p{n}": page(
                title=name, paragraphs=[f"Story {n} is about {t.lower()}."], sidebar=names
            )
            for n, (name, t) in enumerate(zip(names, titles, strict=True))
        }

    old, new = pages("Buses"), pages("Buses")
    new["/p2"] = pages("Buses and coaches")["/p2"]
    for key in new:  # the box lists the new title everywhere
        new[key] = new[key].replace("<li>Buses</li>", "<li>Buses and coaches</li>")
    result = compare_runs(fetches(new), fetches(old))
    assert {k for k, c in result.pages.items() if c.changed} == {"/p2"}


def test_an_edit_of_punctuation_in_code_is_a_change():
    """facelessuser/pymdown-extensions (MkDocs) showed it: ``['default', type_string]``
    became ``('default', type_string)`` in the docs' code samples, and a quote was added
    around ``'some-custom-type'``: the same words, so both read as new markup. In code,
    punctuation is syntax."""
    before = page(extra="<pre><code>config = {'default': ['this', type_string]}</code></pre>")
    after = page(extra="<pre><code>config = {'default': ('this', type_string)}</code></pre>")
    result = change(before, after)
    assert result.changed and result.summary == "1 code block edited in the article body"


def test_a_theme_adding_heading_anchors_to_prose_is_no_change():
    """Prose punctuation a theme adds (a pilcrow or a hash link beside every heading) is
    markup, not an edit."""
    anchored = page().replace("</h1>", "<a class='headerlink' href='#top'>¶</a></h1>")
    anchored = anchored.replace("<p>Cyclists", "<p><a href='#c'>#</a> Cyclists")
    assert not change(page(), anchored).changed


def test_code_stored_without_its_punctuation_compares_on_words_as_before():
    """Blocks stored by version 1 (no marks) against today's: an upgrade reads no change
    where the code kept its words, rather than falling back to the whole-text hash."""
    from auditor.evidence.blocks import decode_blocks, encode_blocks

    code = "<pre><code>config = {'default': ['this', type_string]}</code></pre>"
    stored = decode_blocks(encode_blocks(blocks(page(extra=code)), version=1))
    assert not compare_blocks(stored, blocks(page(extra=code))).changed
    edited = code.replace("this", "that")
    assert compare_blocks(stored, blocks(page(extra=edited))).changed

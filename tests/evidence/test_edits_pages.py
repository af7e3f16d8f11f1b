"""A documentation site read twice through ``read_page``, as an audit reads it: a download
page whose only edit is its file names' version, a heading recapitalised, the same build
fetched twice, a fingerprint stored by blocks version 2, the footer's year and the menu
(issue 31: a documentation site condemned for edits read as "no change")."""

from __future__ import annotations

from dataclasses import replace

from auditor.evidence import read_page
from auditor.evidence.blocks import BLOCKS_VERSION, blocks_version, decode_blocks, encode_blocks
from auditor.evidence.change import compare_blocks
from auditor.evidence.runs import Fetch, compare_runs
from tests.evidence.helpers import FETCHED_AT, PAGES

ORIGIN = "https://docs.foo.example"
SENTENCES = [
    "Foo reads its settings from the project file and from the environment.",
    "Every option has a default that suits a small project on one machine.",
    "A value given on the command line wins over the one in the file.",
    "Paths are resolved against the folder that holds the project file.",
    "Unknown keys are reported once, with the line they were found on.",
    "The cache lives beside the project and can be removed at any time.",
    "Logs go to standard error, one line per event, with the time first.",
    "Plugins are loaded in the order the file lists them, never twice.",
]
PAGES_OF_THE_SITE = {
    "install": "Installing Foo",
    "download": "Downloading Foo",
    "configuration": "The configuration file",
    "cli": "Command line options",
    "plugins": "Writing plugins",
    "faq": "Frequently asked questions",
}
SYSTEMS = ["linux-x86_64", "linux-aarch64", "macos-arm64", "macos-x86_64", "windows-x64", "src"]


def downloads(version: str) -> str:
    """The download table: one row a platform, the file name a link (link-dense cells)."""
    rows = "".join(
        f"<tr><td>{system.replace('-', ' ')}</td><td><a href='https://files.foo.example/"
        f"foo-{version}-{system}.tar.gz'>foo-{version}-{system}.tar.gz</a></td></tr>"
        for system in SYSTEMS
    )
    return f"<h2>Release files</h2><table><tr><th>Platform</th><th>File</th></tr>{rows}</table>"


def doc(
    slug: str,
    *,
    version: str = "5.1.0",
    year: int = 2025,
    menu: tuple[str, ...] = (),
    section: str = "Where the settings live",
) -> str:
    """One page of a MkDocs-like documentation site: a header, a navigation menu, the
    page in ``<main>`` (several paragraphs, a section), a footer with the year."""
    n = list(PAGES_OF_THE_SITE).index(slug)
    said = len(SENTENCES)
    prose = "".join(
        f"<p>{SENTENCES[(n + k) % said]} {SENTENCES[(n + 3 * k + 1) % said]}</p>" for k in range(6)
    )
    items = "".join(
        f"<li><a href='/{s}/'>{t}</a></li>" for s, t in [*PAGES_OF_THE_SITE.items(), *menu]
    )
    extra = downloads(version) if slug == "download" else ""
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>"
        f"{PAGES_OF_THE_SITE[slug]} - Foo</title><link rel='canonical' href='{ORIGIN}/{slug}/'>"
        "</head><body><header class='md-header'><a href='/'>Foo documentation</a></header>"
        f"<div class='md-container'><nav class='md-nav'><ul>{items}</ul></nav>"
        f"<main class='md-main'><article class='md-content'><h1>{PAGES_OF_THE_SITE[slug]}</h1>"
        f"{prose}<h2>{section}</h2><p>{SENTENCES[n]}</p>{extra}</article></main></div>"
        f"<footer class='md-footer'><p>Copyright © 2019 - {year} Foo contributors</p></footer>"
        "</body></html>"
    )


def build(**changes: dict[str, object]) -> dict[str, str]:
    """Every page of the site, ``changes`` the keyword arguments of some pages' ``doc``."""
    return {slug: doc(slug, **changes.get(slug, {})) for slug in PAGES_OF_THE_SITE}  # type: ignore[arg-type]


def read(site: dict[str, str]) -> list[Fetch]:
    fetches = []
    for slug, html in site.items():
        page = read_page(
            html.encode(),
            url=f"{ORIGIN}/{slug}/",
            headers={"Content-Type": "text/html; charset=utf-8"},
            status=200,
            fetched_at=FETCHED_AT,
        )
        fp = page.fingerprint
        assert fp is not None
        fetches.append(Fetch(slug, "docs", fp.exact, fp.simhash, fp.blocks))
    return fetches


def changed(old: dict[str, str], new: dict[str, str]) -> dict[str, str]:
    result = compare_runs(read(new), read(old))
    return {key: c.summary for key, c in result.pages.items() if c.changed}


def test_a_download_page_whose_file_names_moved_to_a_new_version_changed():
    """The real case: six link-dense table cells inside <main>, 6 cells of a page of prose."""
    old, new = build(), build(download={"version": "5.3.0"})
    assert changed(old, new) == {"download": "6 table cells edited in the article body"}


def test_a_heading_recapitalised_is_a_change():
    old = build()
    new = build(configuration={"section": "Where The Settings Live"})
    assert changed(old, new) == {"configuration": "1 heading recapitalised in the article body"}


def test_the_same_build_fetched_twice_is_unchanged():
    result = compare_runs(read(build()), read(build()))
    assert {c.summary for c in result.pages.values()} == {"unchanged"}
    assert result.template is None


def test_a_fingerprint_stored_by_version_2_reads_no_change_against_version_3():
    """The upgrade must not read as change on every page: blocks stored by version 2 (no
    case, no numbers on links) against today's blocks of the same pages."""
    old, new = read(build()), read(build())
    assert {blocks_version(f.blocks) for f in new} == {BLOCKS_VERSION}
    stored = [
        replace(f, blocks=encode_blocks(
            [replace(b, numbers=() if b.links else b.numbers) for b in decode_blocks(f.blocks)],
            version=2,
        ))
        for f in old
    ]  # fmt: skip
    assert {blocks_version(f.blocks) for f in stored} == {2}
    result = compare_runs(new, stored)
    assert {c.summary for c in result.pages.values()} == {"unchanged"}


#: article.html's blocks as the starting commit (blocks version 2) encoded them.
ARTICLE_BLOCKS_V2 = bytes.fromhex(
    "0216000000f047c18440208770030097d506000200a78b13dbefb4cf390300e6e80200060004e4808d65ef2a"
    "060500545a020006000d425fc0ee6a5fc9010097d507000200cac5599ccce59f580500b92e01020100c60c"
    "cea6e03ac8ea060003ed0101010066035e78088df1091600189801010100f0706520d23feb151300189801"
    "010100636f7902ce72dade030087f70a0003007696b4165b6fd1c51300189801010100d9e0620b17402d50"
    "050087f70700030052db0ac89b7d4af40a0018980101010029365342f7969bc60100dec101000100549751"
    "a6a351869c02007cc7090203005475560bfcf281510300b1e3090307009860eaf87ab575d70300b1e30903"
    "0700084c6461e046667505001be20b0003000ab87e310e7e355e010058fd08010300977f89d63625519102"
    "00507c050202005475560bfcf2815103000e82050306009860eaf87ab575d703000e82050306009ffafef9"
    "d50e53660800744503000200"
)


def test_blocks_the_previous_version_stored_compare_unchanged_with_todays():
    page = read_page(
        (PAGES / "article.html").read_bytes(),
        url="https://daily.example/city/harbour-bridge-reopens",
        headers={"Content-Type": "text/html; charset=utf-8"},
        status=200,
        fetched_at=FETCHED_AT,
    )
    assert page.fingerprint is not None
    stored = decode_blocks(ARTICLE_BLOCKS_V2)
    assert len(stored) == 22 and {b.case for b in stored} == {None}
    result = compare_blocks(stored, decode_blocks(page.fingerprint.blocks))
    assert (result.changed, result.summary) == (False, "unchanged")


def test_the_footer_year_and_a_menu_entry_on_every_page_stay_template():
    old = build()
    menu = {"menu": (("changelog", "Changelog"),), "year": 2026}
    new = build(**{slug: menu for slug in PAGES_OF_THE_SITE})
    result = compare_runs(read(new), read(old))
    assert not any(c.changed for c in result.pages.values())
    assert result.template is not None
    assert set(result.template.regions) == {"navigation", "footer"}
    new["download"] = doc("download", version="5.3.0", **menu)  # type: ignore[arg-type]
    assert changed(old, new) == {"download": "6 table cells edited in the article body"}

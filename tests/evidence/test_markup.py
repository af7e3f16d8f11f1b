"""A page's bytes tell which names its tree cannot hold (:mod:`auditor.evidence.markup`),
and what is skipped for a name the bytes never spell reads as what was found without."""

from __future__ import annotations

from typing import Any

import extruct
import pytest
from lxml import etree

from auditor.evidence import structured as structured_module
from auditor.evidence import text as text_module
from auditor.evidence.markup import MAX_SEARCHED, Markup
from auditor.evidence.page import _parsed
from auditor.evidence.structured import read_structured
from auditor.evidence.text import content_root
from tests.evidence.helpers import PAGES

NAMES = (b"itemscope", b"itemprop", b"property", b"role")
TRICKY = [
    b"<HTML><BODY><DIV ITEMSCOPE ItemProp='datePublished' ROLE=Main>x</DIV></BODY></HTML>",
    b"<html><head><META PROPERTY='og:title' CONTENT='t'></head><body><Main>m</Main></body>",
    b"<p>itemscope role property itemprop are words here, not names</p>",
    b"<html><head><meta name='date' content='2024-01-02'></head><body><p>x</p></body></html>",
    b"",
]


def _documents() -> list[bytes]:
    return TRICKY + [path.read_bytes() for path in sorted(PAGES.glob("*.html"))]


@pytest.mark.parametrize("html", _documents())
def test_a_name_the_bytes_never_spell_is_in_no_attribute_nor_tag(html: bytes) -> None:
    tree, source = _parsed(html, "text/html")
    markup = Markup(source)
    for name in (*NAMES, b"main", b"meta"):
        if not markup.may_hold(name):
            text = name.decode()
            assert not tree.xpath(f"//@{text} | //{text}"), text


@pytest.mark.parametrize("html", _documents())
def test_reading_with_the_markup_reads_as_without(html: bytes) -> None:
    tree, source = _parsed(html, "text/html")
    markup = Markup(source)
    urls: list[str | None] = ["https://example.org/a"]
    assert read_structured(tree, urls=urls, markup=markup) == read_structured(tree, urls=urls)
    assert content_root(tree, markup=markup) is content_root(tree)
    assert structured_module._dated_elements(tree, markup) == text_module.elements(
        structured_module._DATED, tree
    )
    assert text_module._mains(tree, tree, markup) == text_module.elements(text_module._MAIN, tree)


def test_extruct_is_not_called_for_a_page_that_spells_neither_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[list[str]] = []
    real = extruct.extract

    def counted(document: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["syntaxes"])
        return real(document, **kwargs)

    monkeypatch.setattr(structured_module.extruct, "extract", counted)
    for html, expected in [
        (TRICKY[3], []),
        (TRICKY[1], [["opengraph"]]),
        (TRICKY[0], [["microdata"]]),
    ]:
        calls.clear()
        tree, source = _parsed(html, "text/html")
        read_structured(tree, urls=["https://example.org/a"], markup=Markup(source))
        assert calls == expected, html


def test_a_failure_is_noted_under_both_syntaxes_whichever_were_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def failing(document: Any, **kwargs: Any) -> Any:
        raise ValueError("boom")

    monkeypatch.setattr(structured_module.extruct, "extract", failing)
    tree, source = _parsed(TRICKY[1], "text/html")
    found = read_structured(tree, urls=["https://example.org/a"], markup=Markup(source))
    assert found.notes == ("extruct-failed:microdata+opengraph:ValueError",)


def test_bytes_over_the_cap_may_hold_every_name() -> None:
    markup = Markup(b"<p>" + b"x" * MAX_SEARCHED + b"</p>")
    assert all(markup.may_hold(name) for name in NAMES)
    assert not Markup(b"<p>x</p>").may_hold(b"itemscope")


def test_an_empty_document_is_read_from_the_bytes_of_its_stand_in() -> None:
    tree, source = _parsed(b"   ", "text/html")
    assert etree.tostring(tree) == b"<html><body/></html>"
    assert source == b"<html><body></body></html>"

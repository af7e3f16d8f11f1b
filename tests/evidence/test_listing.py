"""The links of a page's content area: what a list page lists, its menus left out."""

from __future__ import annotations

from auditor.evidence.listing import MAX_LINKS, content_links
from auditor.evidence.page import parse_html

URL = "https://blog.example/tags/python/"


def _links(body: str) -> tuple[str, ...]:
    return content_links(parse_html(f"<html><body>{body}</body></html>".encode()), URL)


def test_the_list_s_links_resolved_without_the_menus():
    links = _links(
        "<header><nav><a href='/'>Home</a><a href='/tags/'>Tags</a></nav></header>"
        "<main><article><header><h2><a href='/posts/a/#top'>A</a></h2></header></article>"
        "<article><h2><a href='../../posts/b/'>B</a></h2><a href='/posts/a/'>again</a></article>"
        "<a href='mailto:me@blog.example'>mail</a><a href='#comments'>c</a>"
        "<a href='javascript:void(0)'>js</a><a href='/tags/python/'>this page</a></main>"
        "<aside><a href='/about/'>About</a></aside><footer><a href='/rss/'>RSS</a></footer>"
    )
    assert links == ("https://blog.example/posts/a/", "https://blog.example/posts/b/")


def test_a_page_of_too_many_links_is_not_read_as_a_list():
    many = "".join(f"<a href='/p/{i}'>{i}</a>" for i in range(MAX_LINKS + 1))
    assert _links(many) == ()
    assert len(_links(many.rsplit("<a", 1)[0])) == MAX_LINKS


def test_a_page_without_a_body_or_links_lists_nothing():
    assert content_links(parse_html(b""), URL) == ()
    assert _links("<p>No links here.</p>") == ()

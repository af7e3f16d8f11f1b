"""Structure-aware page generators: an article page with its dates, and the noise around them.

A :class:`Page` is what a page means (its URL, text and the article's own
``dateModified``/``datePublished``); :func:`render` writes it as HTML with a chosen
mix of *noise*: other schema.org nodes carrying other dates (the site, the
publisher, the WebPage, teaser articles of other pages), a broken JSON-LD block,
microdata, RDFa, OpenGraph and meta tags, boilerplate. None of the noise may
change which date the page states about itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from hypothesis import strategies as st

from tests.fuzz.sitemaps import rfc822_dates, w3c_dates

URL = "https://example.com/news/story"
OTHER_DATE = "2001-02-03T04:05:06Z"  # what every noise node claims; never the answer
#: Encodings a page may come in, with characters each can carry, and how HTML names them.
PAGE_ENCODINGS: dict[str, tuple[str, str]] = {
    "utf-8": ("éü日本€😀", "utf-8"),
    "windows-1252": ("€éüñ", "windows-1252"),
    "iso-8859-1": ("éüñß", "iso-8859-1"),
    "iso-8859-2": ("łśżč", "iso-8859-2"),
    "koi8-r": ("жяЖ", "koi8-r"),
    "shift_jis": ("日本語テスト", "shift_jis"),
    "euc-jp": ("日本語", "euc-jp"),
    "gbk": ("中文汉字", "gbk"),
    "big5": ("中文", "big5"),
    "euc-kr": ("한국어", "euc-kr"),
    "utf-16-le": ("éü日本€", "utf-16"),
    "utf-16-be": ("éü日本", "utf-16"),
}
NOISE = (
    "website",
    "organization",
    "webpage",
    "teaser",
    "broken-json-ld",
    "microdata-other",
    "opengraph",
    "meta",
    "rdfa-other",
    "boilerplate",
    "comments",
)
PLACEMENTS = ("alone", "graph", "list", "main-entity", "cdata", "trailing-comma")
SYNTAXES = ("json-ld", "json-ld", "microdata", "opengraph", "meta")
#: Noise that rightly outranks a syntax: a date of this page stated in a stronger place.
OUTRANKS = {
    "json-ld": frozenset(),
    "microdata": frozenset(),
    "opengraph": frozenset({"webpage", "opengraph"}),
    "meta": frozenset({"webpage", "opengraph", "meta"}),
}


@dataclass(frozen=True)
class Page:
    """A page as meant, and how it is written."""

    title: str
    paragraphs: tuple[str, ...]
    modified: str | None  # the article's dateModified as written
    published: str | None
    placement: str = "alone"
    value_shape: str = "string"  # string | list | @value
    article_url: str | None = URL  # how the article names its page (None: not at all)
    noise: tuple[str, ...] = ()
    syntax: str = "json-ld"  # what carries the page's own dates: one of SYNTAXES


def _date_value(text: str, shape: str) -> object:
    return {"string": text, "list": [text], "@value": {"@value": text}}[shape]


def _article(page: Page) -> dict:
    node: dict = {"@type": "NewsArticle", "headline": page.title}
    if page.article_url is not None:
        node["mainEntityOfPage"] = {"@type": "WebPage", "@id": page.article_url}
    if page.syntax != "json-ld":
        return node
    if page.modified is not None:
        node["dateModified"] = _date_value(page.modified, page.value_shape)
    if page.published is not None:
        node["datePublished"] = _date_value(page.published, page.value_shape)
    return node


def _own_dates(page: Page) -> tuple[str, str]:
    """The page's own dates in microdata, OpenGraph or meta tags: (in head, in body)."""
    pairs = [("dateModified", page.modified), ("datePublished", page.published)]
    dated = [(name, value) for name, value in pairs if value is not None]
    if page.syntax == "microdata":
        props = "".join(f"<meta itemprop={quoteattr(n)} content={quoteattr(v)}>" for n, v in dated)
        return "", (
            '<div itemscope itemtype="https://schema.org/NewsArticle">'
            f'<link itemprop="mainEntityOfPage" href={quoteattr(URL)}>{props}</div>'
        )
    names = {
        "opengraph": {
            "dateModified": "article:modified_time",
            "datePublished": "article:published_time",
        },
        "meta": {"dateModified": "datemodified", "datePublished": "datepublished"},
    }.get(page.syntax)
    if names is None:
        return "", ""
    attribute = "property" if page.syntax == "opengraph" else "name"
    return "".join(
        f"<meta {attribute}={quoteattr(names[n])} content={quoteattr(v)}>" for n, v in dated
    ), ""


def _noise_nodes(page: Page) -> list[dict]:
    nodes = []
    if "website" in page.noise:
        nodes.append(
            {"@type": "WebSite", "url": "https://example.com/", "dateModified": OTHER_DATE}
        )
    if "organization" in page.noise:
        nodes.append({"@type": "Organization", "name": "X", "dateModified": OTHER_DATE})
    if "webpage" in page.noise:
        nodes.append({"@type": "WebPage", "url": URL, "dateModified": OTHER_DATE})
    if "teaser" in page.noise:
        teaser = {
            "@type": "Article",
            "url": "https://example.com/other",
            "dateModified": OTHER_DATE,
        }
        nodes.append(teaser)
    return nodes


def _jsonld(page: Page) -> str:
    article, others = _article(page), _noise_nodes(page)
    context = "https://schema.org"
    if page.placement == "graph":
        data: object = {"@context": context, "@graph": [*others, article]}
    elif page.placement == "list":
        data = [{"@context": context, **n} for n in [*others, article]]
    elif page.placement == "main-entity":
        data = {"@context": context, "@type": "WebPage", "mainEntity": article}
        data = [data, *others]
    else:
        data = [{"@context": context, **article}, *others]
    text = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    if page.placement == "cdata":
        text = f"//<![CDATA[\n{text}\n//]]>"
    elif page.placement == "trailing-comma":
        text = text[:-1] + ",]" if text.endswith("]") else text
    return f'<script type="application/ld+json">{text}</script>'


def _head_noise(page: Page) -> str:
    parts = []
    if "broken-json-ld" in page.noise:
        parts.append('<script type="application/ld+json">{"@type": "Article", "dateModified": ')
        parts.append("</script>")
    if "opengraph" in page.noise:
        parts.append(f'<meta property="article:modified_time" content="{OTHER_DATE}">')
    if "meta" in page.noise:
        parts.append(f'<meta name="last-modified" content="{OTHER_DATE}">')
        parts.append(f'<meta http-equiv="last-modified" content="{OTHER_DATE}">')
    if "comments" in page.noise:
        parts.append(f"<!-- dateModified: {OTHER_DATE} -->")
    return "".join(parts)


def _body_noise(page: Page) -> str:
    parts = []
    if "microdata-other" in page.noise:
        parts.append(
            '<div itemscope itemtype="https://schema.org/Article">'
            '<link itemprop="url" href="https://example.com/other">'
            f'<meta itemprop="dateModified" content="{OTHER_DATE}"></div>'
        )
    if "rdfa-other" in page.noise:
        parts.append(
            '<div vocab="https://schema.org/" typeof="Article" resource="https://example.com/o">'
            f'<span property="dateModified">{OTHER_DATE}</span></div>'
        )
    return "".join(parts)


def render(page: Page, charset_meta: str | None = None) -> str:
    """The page as HTML text; ``charset_meta`` adds ``<meta charset>`` first in the head."""
    meta = f'<meta charset="{charset_meta}">' if charset_meta else ""
    paragraphs = "".join(f"<p>{escape(p)}</p>" for p in page.paragraphs)
    frame = "boilerplate" in page.noise
    nav = '<nav><a href="/">Home</a> <a href="/news">News</a></nav>' if frame else ""
    footer = '<footer class="site-footer">(c) Example</footer>' if frame else ""
    aside = '<aside class="related">Related stories</aside>' if frame else ""
    own_head, own_body = _own_dates(page)
    return (
        f"<!DOCTYPE html><html lang=en><head>{meta}<title>{escape(page.title)}</title>"
        f'<link rel="canonical" href={quoteattr(URL)}>{_head_noise(page)}{own_head}'
        f"{_jsonld(page)}</head>"
        f"<body>{nav}<main><article><h1>{escape(page.title)}</h1>{paragraphs}</article>"
        f"{aside}</main>{own_body}{_body_noise(page)}{footer}</body></html>"
    )


def _words(extra: str) -> st.SearchStrategy[str]:
    letters = "abcdefghijklmnopqrstuvwxyz" + extra
    word = st.text(alphabet=letters, min_size=1, max_size=10)
    return st.lists(word, min_size=1, max_size=12).map(" ".join)


#: Dates as pages write them: W3C, RFC 822, a space instead of T, offsets without colon.
page_dates = st.one_of(
    w3c_dates(),
    rfc822_dates(),
    w3c_dates().map(lambda d: d.replace("T", " ", 1)),
    w3c_dates().map(lambda d: re.sub(r"([+-]\d\d):(\d\d)$", r"\1\2", d)),  # +0200
)


@st.composite
def pages(draw: st.DrawFn, extra: str = "éü日本") -> Page:
    syntax = draw(st.sampled_from(SYNTAXES))
    noise = draw(st.lists(st.sampled_from(NOISE), unique=True))
    return Page(
        syntax=syntax,
        noise=tuple(n for n in noise if n not in OUTRANKS[syntax]),
        title=draw(_words(extra)),
        paragraphs=tuple(draw(st.lists(_words(extra), min_size=1, max_size=5))),
        modified=draw(st.none() | page_dates | page_dates),
        published=draw(st.none() | page_dates | page_dates),
        placement=draw(st.sampled_from(PLACEMENTS)),
        value_shape=draw(st.sampled_from(["string", "string", "list", "@value"])),
        article_url=draw(st.sampled_from([URL, URL + "#article", "/news/story", None])),
    )

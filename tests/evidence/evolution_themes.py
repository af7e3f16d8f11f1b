"""The page templates of the evolution fixtures (tests/evidence/make_evolutions.py).

Each theme renders one page of a small static site from its content and the site's
*frame* of the moment (copyright year, asset version, recent posts, menu, banners):
what a site's template puts around every page, and what changes between two builds.
Some themes mark their frame (``<nav>``, ``<aside class="widget">``, ``<footer>``),
others do not (``<div class="left">``), so that both the page rules and the template
learned across pages are exercised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

__all__ = ["THEMES", "Frame", "Page", "Render"]


@dataclass
class Page:
    """One page's content: its blocks are ``(tag, text)``; ``li`` runs become a list."""

    path: str
    title: str
    blocks: list[tuple[str, str]]
    lastmod: str
    date: str = "3 March 2026"
    price: str | None = None
    specs: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Frame:
    """What the site's template shows around every page, in one build."""

    name: str
    year: int = 2025
    asset: str = "1.0.0"
    recent: list[str] = field(default_factory=list)
    menu: list[str] = field(default_factory=list)
    ticker: str = ""
    cookie: bool = False
    version: str = ""
    promo: str = ""


@dataclass
class Render:
    """Everything a theme needs for one page of one build."""

    page: Page
    frame: Frame
    prev: Page | None
    next: Page | None
    related: list[Page]
    counters: dict[str, int]


def _body(page: Page, para: str = "<p>{}</p>") -> str:
    out, items = [], []
    for tag, text in [*page.blocks, ("end", "")]:
        if tag == "li":
            items.append(f"<li>{escape(text)}</li>")
            continue
        if items:
            out.append("<ol>" + "".join(items) + "</ol>")
            items = []
        if tag == "p":
            out.append(para.format(escape(text)))
        elif tag in ("h2", "h3"):
            out.append(f"<{tag}>{escape(text)}</{tag}>")
        elif tag == "pre":
            out.append(f"<pre><code>{escape(text)}</code></pre>")
    return "\n".join(out)


def _head(r: Render, css: str) -> str:
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(r.page.title)} | {escape(r.frame.name)}</title>\n"
        f'<link rel="stylesheet" href="/assets/{css}?v={r.frame.asset}">\n'
        f'<script src="/assets/site.js?v={r.frame.asset}" defer></script></head>\n'
    )


def _link(page: Page | None, label: str, rel: str = "") -> str:
    if page is None:
        return ""
    attr = f' rel="{rel}"' if rel else ""
    return f'<a href="{page.path}"{attr}>{label}{escape(page.title)}</a>'


def wordpress(r: Render) -> str:
    """A WordPress-like blog theme: every part of the frame marked."""
    p, f, c = r.page, r.frame, r.counters
    recent = "".join(f'<li><a href="#">{escape(t)}</a></li>' for t in f.recent)
    comments = "".join(
        f'<li class="comment"><p>Comment {i + 1}: thanks for this.</p></li>'
        for i in range(c["comments"])
    )
    return (
        _head(r, "style.css") + '<body class="single single-post">\n<div id="page" class="site">\n'
        f'<header id="masthead" class="site-header"><p class="site-title"><a href="/">'
        f"{escape(f.name)}</a></p><nav class='main-navigation'><ul><li><a href='/'>Home</a>"
        f"</li><li><a href='/about/'>About</a></li></ul></nav></header>\n"
        f'<div id="content" class="site-content"><div id="primary" class="content-area">'
        f'<main id="main" class="site-main">\n<article class="post type-post">\n'
        f'<header class="entry-header"><h1 class="entry-title">{escape(p.title)}</h1>'
        f'<div class="entry-meta">Posted on {p.date} · <span class="comments-link">'
        f"{c['comments']} Comments</span> · {c['views']:,} views</div></header>\n"
        f'<div class="entry-content">\n{_body(p)}\n</div></article>\n'
        f'<nav class="navigation post-navigation"><div class="nav-links">'
        f'<div class="nav-previous">{_link(r.prev, "", "prev")}</div>'
        f'<div class="nav-next">{_link(r.next, "", "next")}</div></div></nav>\n'
        f'<div id="comments" class="comments-area"><ol>{comments}</ol></div>\n'
        f'</main></div>\n<aside id="secondary" class="widget-area"><section class="widget">'
        f"<h2>Recent Posts</h2><ul>{recent}</ul></section></aside></div>\n"
        f'<footer id="colophon" class="site-footer"><div class="site-info">© {f.year} '
        f"{escape(f.name)} · Proudly powered by WordPress</div></footer>\n</div></body></html>\n"
    )


def handmade(r: Render) -> str:
    """A hand-written site: no semantic tags, no telling class names; the content root
    is the body, and only the template learned across pages tells frame from content."""
    p, f = r.page, r.frame
    menu = "".join(f"<p>{escape(m)}</p>" for m in f.menu)
    return (
        _head(r, "main.css")
        + f'<body>\n<div class="wrap">\n<div class="top"><b>{escape(f.name)}</b></div>\n'
        f'<div class="ticker">{escape(f.ticker)}</div>\n<div class="left">{menu}</div>\n'
        f'<div class="page">\n<h1>{escape(p.title)}</h1>\n{_body(p)}\n</div>\n'
        f'<div class="bottom">Copyright {f.year} {escape(f.name)}. All rights reserved.</div>\n'
        "</div></body></html>\n"
    )


def docs(r: Render) -> str:
    """A documentation theme: a long menu beside a short <main> (under a tenth of the
    body's text, so the root falls back to <body>), a version note, previous/next."""
    p, f = r.page, r.frame
    menu = "".join(f'<li><a href="#">{escape(m)}</a></li>' for m in f.menu)
    toc = "".join(f"<li>{escape(text)}</li>" for tag, text in p.blocks if tag == "h2")
    overview = "".join(f"<p>{escape(m)}: what it is for, when to use it.</p>" for m in f.menu)
    return (
        _head(r, "docs.css")
        + f'<body>\n<div class="md-container">\n<div class="version-note">{escape(f.version)}'
        f'</div>\n<div class="site-index"><ul>{menu}</ul><div class="overview">{overview}</div>'
        f'</div>\n<div class="page-toc"><ul>{toc}</ul></div>\n'
        f"<main><h1>{escape(p.title)}</h1>\n{_body(p)}\n</main>\n"
        f'<div class="md-footer">{_link(r.prev, "Previous: ", "prev")} '
        f"{_link(r.next, 'Next: ', 'next')}</div>\n"
        f'<div class="copyright">© {f.year} The Project authors</div>\n</div></body></html>\n'
    )


def shop(r: Render) -> str:
    """A shop: a product, its price and specs; an unmarked promotion strip, an upsell
    box of other products, and (in one build) a cookie notice."""
    p, f = r.page, r.frame
    specs = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in p.specs)
    upsell = "".join(f'<li><a href="{o.path}">{escape(o.title)}</a></li>' for o in r.related)
    cookie = (
        '<div id="cookie-notice">We use cookies to run this shop. <button>OK</button></div>\n'
        if f.cookie
        else ""
    )
    return (
        _head(r, "shop.css")
        + f"<body>\n{cookie}<header><a href='/'>{escape(f.name)}</a></header>\n"
        f'<div class="strip">{escape(f.promo)}</div>\n<main>\n<div class="product">'
        f'<h1>{escape(p.title)}</h1>\n<p class="price">Price: €{p.price}</p>\n'
        f'<div class="description">{_body(p)}</div>\n<table class="specs">{specs}</table>'
        f'</div>\n<div class="upsell"><h2>Customers also bought</h2><ul>{upsell}</ul></div>\n'
        f"</main>\n<footer>© {f.year} {escape(f.name)} · Prices include VAT</footer>\n"
        "</body></html>\n"
    )


def news_classic(r: Render) -> str:
    """A news site's first theme."""
    p, f = r.page, r.frame
    return (
        _head(r, "classic.css")
        + f'<body>\n<header class="masthead"><h2 class="brand">{escape(f.name)}</h2>'
        f"<nav><a href='/'>Front page</a> <a href='/city/'>City</a></nav></header>\n"
        f"<main><article>\n<h1>{escape(p.title)}</h1>\n"
        f'<p class="byline">By the city desk, {p.date}</p>\n{_body(p)}\n</article></main>\n'
        f"<footer><p>© {f.year} {escape(f.name)}</p></footer>\n</body></html>\n"
    )


def news_modern(r: Render) -> str:
    """The same news site after a redesign: every tag and class rewritten, no <main> and
    no <article>, paragraphs in <div>s, the byline in a <span>: the same words."""
    p, f = r.page, r.frame
    return (
        _head(r, "modern.css")
        + f'<body class="theme-2">\n<div class="topbar"><div class="topbar__inner">'
        f'<span class="logo">{escape(f.name)}</span><div class="menu"><a href="/">Front page'
        f'</a> <a href="/city/">City</a></div></div></div>\n<div class="layout"><div class='
        f'"story"><div class="story__head"><h1 class="headline">{escape(p.title)}</h1>'
        f'<span class="meta">By the city desk, {p.date}</span></div>\n'
        f'<div class="story__body">{_body(p, "<div class=para><span>{}</span></div>")}'
        f'</div></div></div>\n<div class="site-end"><small>© {f.year} {escape(f.name)}'
        "</small></div>\n</body></html>\n"
    )


def tutorials(r: Render) -> str:
    """Tutorials in series: a box listing the series' parts, previous/next part links
    without rel, and a box of other tutorials that differs per page."""
    p, f = r.page, r.frame
    parts = "".join(
        f"<li>{escape(t)}</li>" if t == p.title else f'<li><a href="#">{escape(t)}</a></li>'
        for t in f.recent
    )
    box = f'<div class="collection"><ol>{parts}</ol></div>\n' if p.title in f.recent else ""
    more = "".join(f'<li><a href="{o.path}">{escape(o.title)}</a></li>' for o in r.related)
    return (
        _head(r, "tut.css") + f"<body>\n<header><a href='/'>{escape(f.name)}</a></header>\n<main>\n"
        f"<h1>{escape(p.title)}</h1>\n{box}{_body(p)}\n"
        f'<div class="steps">{_link(r.prev, "← Previous: ")} {_link(r.next, "Next: ")}</div>\n'
        f'<div class="more"><h3>More tutorials</h3><ul>{more}</ul></div>\n</main>\n'
        f"<footer>© {f.year} {escape(f.name)}</footer>\n</body></html>\n"
    )


def community(r: Render) -> str:
    """A community magazine: counters that move on every visit, an unmarked "trending"
    column the same on every page, and (in one build) an unmarked cookie bar."""
    p, f, c = r.page, r.frame, r.counters
    trending = "".join(f"<p>{escape(t)}</p>" for t in f.recent)
    cookie = (
        '<div class="cc-window"><span>This website stores data such as small files to give'
        " you the best experience.</span> <span>Accept</span></div>\n"
        if f.cookie
        else ""
    )
    return (
        _head(r, "mag.css")
        + f"<body>\n{cookie}<div class='brand'>{escape(f.name)}</div>\n<div class='post'>\n"
        f"<h1>{escape(p.title)}</h1>\n<div class='meta'><span>{c['ago']} days ago</span> · "
        f"<span>{c['read']} min read</span> · <span>{c['views']:,} views</span> · "
        f"<span>{c['likes']} likes</span> · <span>{c['comments']} comments</span></div>\n"
        f"{_body(p)}\n</div>\n<div class='column'><h3>Trending now</h3>{trending}</div>\n"
        f"<div class='end'>© {f.year} {escape(f.name)}</div>\n</body></html>\n"
    )


THEMES = {
    "wordpress": wordpress,
    "handmade": handmade,
    "docs": docs,
    "shop": shop,
    "news-classic": news_classic,
    "news-modern": news_modern,
    "tutorials": tutorials,
    "community": community,
}

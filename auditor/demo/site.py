"""Simulated sites, one lastmod behaviour each, whose pages change when told to.

A site keeps a virtual clock (by default in the past, so nothing it says is in the
future; the demo starts it at its simulated clock's time) and a state per page: when
it was created, when its content last changed (and its version), when its lastmod
was last bumped. :meth:`SimulatedSite.tick` moves the clock on by a few days (or the
step given) and changes some pages, as time passing would.
How the sitemap and the pages report those facts is the site's behaviour.

Touches: nothing.
"""

from __future__ import annotations

import html
import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

__all__ = ["BEHAVIOURS", "WORDS", "Behaviour", "PageState", "SimulatedSite", "article_markup"]

#: How far in the past a site's virtual clock starts, and how much a tick moves it.
CLOCK_START_AGO = timedelta(days=400)
TICK = timedelta(days=3)
#: Share of pages whose content changes in one tick; of pages whose lastmod is bumped.
CHANGE_SHARE = 0.25
BUMP_SHARE = 0.5
#: The words of the demo's pages (and of the plan benchmark's world).
WORDS = [
    "kettle",
    "lamp",
    "river",
    "stone",
    "garden",
    "window",
    "harbour",
    "meadow",
    "lantern",
    "copper",
    "orchard",
    "violin",
    "compass",
    "ribbon",
    "marble",
    "pepper",
    "saddle",
    "timber",
    "velvet",
    "walnut",
]


@dataclass(frozen=True)
class Behaviour:
    """How a site reports its changes.

    ``lastmod``: ``exact`` (the change time), ``date`` (its day), ``generation``
    (the moment the sitemap is served), ``frozen`` (right once, never moves again),
    ``bumped`` (moves without content changes), or None (absent).
    ``structured``: ``json-ld``, ``microdata``, ``json-ld-render`` (dateModified is
    the moment the page is served), or None.
    """

    name: str
    lastmod: str | None
    structured: str | None
    says: str  # what a user should expect auditor to conclude, in words


BEHAVIOURS = {
    b.name: b
    for b in (
        Behaviour("accurate-jsonld", "exact", "json-ld", "trusted from the first run"),
        Behaviour("accurate-date-microdata", "date", "microdata", "trusted from the first run"),
        Behaviour("generation-time", "generation", None, "untrusted: generation time"),
        Behaviour(
            "generation-render-time", "generation", "json-ld-render", "untrusted: generation time"
        ),
        Behaviour("no-lastmod", None, "json-ld", "no-lastmod"),
        Behaviour("frozen", "frozen", "json-ld", "trusted, then untrusted once pages change"),
        Behaviour("bumping", "bumped", None, "inconclusive, then untrusted"),
        Behaviour("accurate-no-structured", "exact", None, "inconclusive, then trusted"),
    )
}


@dataclass
class PageState:
    """What is true of one page."""

    path: str
    section: str
    created: datetime
    modified: datetime
    version: int = 1
    bumped: datetime | None = None
    first_modified: datetime | None = None  # what a frozen lastmod keeps saying

    def __post_init__(self) -> None:
        if self.first_modified is None:
            self.first_modified = self.modified


@dataclass
class SimulatedSite:
    """One site: its pages, their state, and how it reports them."""

    name: str
    sections: dict[str, Behaviour]  # section name -> behaviour
    pages_per_section: int = 120
    seed: int = 0
    clock: datetime = field(default_factory=lambda: datetime.now(UTC) - CLOCK_START_AGO)
    pages: dict[str, PageState] = field(default_factory=dict)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        for section in self.sections:
            for i in range(self.pages_per_section):
                created = self.clock - timedelta(seconds=rng.randrange(2 * 365 * 86_400))
                modified = created + (self.clock - created) * rng.random() * 0.9
                path = f"/{section}/{i}"
                self.pages[path] = PageState(path, section, _whole(created), _whole(modified))
        self._rng = rng

    def tick(self, step: timedelta = TICK) -> list[str]:
        """Time passes (``step``): some pages change (and some lastmods are bumped), each
        at a moment within the step. Returns the paths whose content changed."""
        start, self.clock = self.clock, self.clock + step
        changed = []
        for page in self.pages.values():
            if self._rng.random() < CHANGE_SHARE:
                page.modified = _whole(start + step * self._rng.random())
                page.version += 1
                changed.append(page.path)
            if self._rng.random() < BUMP_SHARE:
                page.bumped = _whole(start + step * self._rng.random())
        return changed

    # -- what the site serves ------------------------------------------------------------
    def robots_txt(self, origin: str) -> str:
        """robots.txt: one disallowed area, the sitemap declared."""
        return f"User-agent: *\nDisallow: /account/\n\nSitemap: {origin}/sitemap.xml\n"

    def sitemap(self, origin: str, now: datetime) -> str:
        """The sitemap (an index when the site has several sections)."""
        if len(self.sections) > 1:
            items = "".join(
                f"<sitemap><loc>{origin}/sitemap-{s}.xml</loc></sitemap>\n" for s in self.sections
            )
            return _xml("sitemapindex", items)
        return self.section_sitemap(next(iter(self.sections)), origin, now)

    def section_sitemap(self, section: str, origin: str, now: datetime) -> str:
        """The urlset of one section."""
        behaviour = self.sections[section]
        lines = []
        for n, page in enumerate(p for p in self.pages.values() if p.section == section):
            lastmod = _lastmod(behaviour, page, now - timedelta(seconds=n % 2))
            tag = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
            loc = html.escape(origin + page.path, quote=False)
            lines.append(f"<url><loc>{loc}</loc>{tag}</url>\n")
        return _xml("urlset", "".join(lines))

    def page_html(self, path: str, now: datetime) -> str | None:
        """The page, with boilerplate that changes on every request."""
        page = self.pages.get(path)
        if page is None:
            return None
        behaviour = self.sections[page.section]
        title = f"{page.section.title()} {path.rsplit('/', 1)[1]}"
        body = "".join(f"<p>{html.escape(t)}</p>" for t in _paragraphs(page))
        structured = _structured(behaviour.structured, page, title, now)
        token = f"{random.getrandbits(64):016x}"
        trending = random.choice(WORDS)
        return (
            f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
            f"{structured.head}</head><body><header><nav><a href='/'>Home</a> "
            f"<a href='/{page.section}/0'>{page.section}</a></nav></header>"
            f"<aside class='trending'>Trending now: {trending}</aside>"
            f"<main><article{structured.article}><h1>{title}</h1>{structured.body}{body}"
            f"</article></main><form class='newsletter'><input type='hidden' name='csrf' "
            f"value='{token}'><input name='email'></form>"
            f"<footer>Rendered at {now.isoformat()} by demo</footer></body></html>"
        )


@dataclass(frozen=True)
class _Markup:
    head: str = ""
    article: str = ""
    body: str = ""


def _structured(kind: str | None, page: PageState, title: str, now: datetime) -> _Markup:
    published = page.created.isoformat()
    modified = (now if kind == "json-ld-render" else page.modified).isoformat()
    return _Markup(*article_markup(kind, title, published, modified))


def article_markup(
    kind: str | None, title: str, published: str, modified: str
) -> tuple[str, str, str]:
    """(head, article attributes, article body) stating an article's dates: ``kind``
    ``json-ld`` or ``json-ld-render`` (a JSON-LD script in the head), ``microdata``
    (itemprops in the article), or None (nothing)."""
    if kind in ("json-ld", "json-ld-render"):
        data = {
            "@context": "https://schema.org",
            "@type": "Article",
            "headline": title,
            "datePublished": published,
            "dateModified": modified,
        }
        return f'<script type="application/ld+json">{json.dumps(data)}</script>', "", ""
    if kind == "microdata":
        return (
            "",
            ' itemscope itemtype="https://schema.org/Article"',
            f'<meta itemprop="datePublished" content="{published}">'
            f'<meta itemprop="dateModified" content="{modified}">',
        )
    return "", "", ""


def _lastmod(behaviour: Behaviour, page: PageState, now: datetime) -> str | None:
    mode = behaviour.lastmod
    if mode is None:
        return None
    if mode == "date":
        return page.modified.strftime("%Y-%m-%d")
    moment = {
        "exact": page.modified,
        "generation": now,
        "frozen": page.first_modified or page.modified,
        "bumped": max(page.modified, page.bumped or page.modified),
    }[mode]
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _paragraphs(page: PageState) -> list[str]:
    rng = random.Random(f"{page.path}:{page.version}")
    return [" ".join(rng.choice(WORDS) for _ in range(24)).capitalize() + "." for _ in range(4)]


def _xml(root: str, items: str) -> str:
    ns = "http://www.sitemaps.org/schemas/sitemap/0.9"
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<{root} xmlns="{ns}">\n{items}</{root}>\n'


def _whole(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)

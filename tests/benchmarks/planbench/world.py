"""The plan bench's world: sites whose pages change at Poisson moments drawn up front.

Every instant is a whole number of seconds since the world's start ``t0`` (midnight UTC
of day 0; negative before it), so change events, lastmods, fetches and freshness all
agree to the second. Each page has a change rate drawn from :data:`RATE_MIX`, a creation
moment up to two years before day 0, and every change event from then to the end of the
run drawn from a seeded generator: every policy sees the same events. The page's content
version at instant ``s`` is the number of its events at or before ``s``.

A site has one or two sections (one sitemap each, under an index when two), each with a
:class:`Section` behaviour: what its ``<lastmod>`` says (``exact``, ``date``,
``generation``, ``frozen``, ``bumped`` or None) and which structured ``dateModified`` its
pages carry, on which share of them. What the site would serve at an instant is read
directly by the baselines (:meth:`PlanSite.lastmod_at`, :meth:`PlanSite.version_at`)
and served over HTTP by :mod:`.server` for auditor (:meth:`PlanSite.sitemap_xml`,
:meth:`PlanSite.page_html`), both from the same functions.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np

from auditor.demo.site import WORDS, article_markup

__all__ = [
    "BEHAVIOUR_GROUPS",
    "BUMP_RATE",
    "DAY",
    "FREEZE_AT",
    "RATE_MIX",
    "SPECS",
    "PlanPage",
    "PlanSite",
    "RateClass",
    "Section",
    "SiteSpec",
    "World",
    "make_world",
]

DAY = 86_400
#: A frozen lastmod stops moving at this instant (the world's start): right then, never after.
FREEZE_AT = 0
#: Lastmod bumps without a change, per page per day, on ``bumped`` sections.
BUMP_RATE = 0.25
#: Pages are created this many days before day 0, uniformly between the two.
CREATED_DAYS = (14, 730)


@dataclass(frozen=True)
class RateClass:
    """A share of the pages whose change rates (per day) are log-uniform in [low, high)."""

    name: str
    share: float
    low: float
    high: float


#: The heavy-tailed mix: most pages change every one to twelve months, two in five every
#: two to ten days, one in fifty one to five times a day (rates log-uniform in each class).
RATE_MIX = (
    RateClass("rare", 0.58, 1 / 365, 1 / 30),
    RateClass("regular", 0.40, 1 / 10, 0.6),
    RateClass("hot", 0.02, 1.0, 5.0),
)


@dataclass(frozen=True)
class Section:
    """What one sub-sitemap's lastmod says, and the structured data of its pages.

    ``lastmod``: ``exact`` (the change instant), ``date`` (its day), ``generation`` (the
    moment the sitemap is served), ``frozen`` (right at :data:`FREEZE_AT`, never moves
    after), ``bumped`` (moves on every change and on bumps without one), None (absent).
    ``structured``: ``json-ld`` or ``microdata`` (dateModified the last change),
    ``json-ld-render`` (dateModified the moment the page is served), None; carried by
    ``share`` of the pages.
    """

    lastmod: str | None
    structured: str | None = None
    share: float = 1.0


@dataclass(frozen=True)
class SiteSpec:
    """A kind of site: its name, the lastmod behaviour it is reported under, its sections."""

    name: str
    behaviour: str
    sections: dict[str, Section]


#: The behaviours results are reported under, in order.
BEHAVIOUR_GROUPS = (
    "accurate",
    "date-only",
    "generation",
    "no-lastmod",
    "frozen",
    "bumping",
    "mixed",
)

#: A fleet takes these in turn (the first seven: one of each behaviour).
SPECS = (
    SiteSpec("accurate-jsonld", "accurate", {"pages": Section("exact", "json-ld", 0.6)}),
    SiteSpec("date-microdata", "date-only", {"pages": Section("date", "microdata", 0.6)}),
    SiteSpec("generation", "generation", {"pages": Section("generation")}),
    SiteSpec("no-lastmod", "no-lastmod", {"pages": Section(None, "json-ld")}),
    SiteSpec("frozen", "frozen", {"pages": Section("frozen", "json-ld")}),
    SiteSpec("bumping", "bumping", {"pages": Section("bumped")}),
    SiteSpec(
        "mixed",
        "mixed",
        {"products": Section("generation"), "blog": Section("exact", "json-ld", 0.6)},
    ),
    SiteSpec("accurate-plain", "accurate", {"pages": Section("exact")}),  # no structured data
    SiteSpec("date-jsonld", "date-only", {"pages": Section("date", "json-ld", 0.6)}),
    SiteSpec("generation-render", "generation", {"pages": Section("generation", "json-ld-render")}),
    SiteSpec("no-lastmod-plain", "no-lastmod", {"pages": Section(None)}),
    SiteSpec("frozen-microdata", "frozen", {"pages": Section("frozen", "microdata")}),
    SiteSpec("bumping-jsonld", "bumping", {"pages": Section("bumped", "json-ld")}),
    SiteSpec("mixed-docs", "mixed", {"docs": Section("exact"), "tags": Section("bumped")}),
)

_PARAGRAPHS = 4
_NO_EVENTS = np.zeros(0, dtype=np.int64)


@dataclass
class PlanPage:
    """One page: its rate (changes per day), creation and change instants (sorted)."""

    path: str
    section: str
    index: int  # its place in its section's sitemap
    rate: float
    rate_class: str
    created: int
    events: np.ndarray  # int64 instants, sorted, unique
    bumps: np.ndarray = field(default_factory=lambda: _NO_EVENTS)  # lastmod-only moves
    structured: bool = False  # carries its section's structured dateModified

    def version_at(self, s: int) -> int:
        """The content version at instant ``s``: the events at or before it."""
        return int(np.searchsorted(self.events, s, side="right"))

    def modified_at(self, s: int) -> int:
        """The instant of the last change at or before ``s`` (its creation if none)."""
        n = self.version_at(s)
        return int(self.events[n - 1]) if n else self.created


@dataclass
class PlanSite:
    """One simulated site of the bench: its pages' events and what it serves."""

    name: str
    spec: SiteSpec
    t0: datetime
    pages: list[PlanPage]
    seed: int
    host: str = "127.0.0.2"

    def __post_init__(self) -> None:
        self.by_path = {p.path: i for i, p in enumerate(self.pages)}
        self._render = random.Random(self.seed)  # the boilerplate's churn, per request

    @property
    def behaviour(self) -> str:
        """The lastmod behaviour the site is reported under."""
        return self.spec.behaviour

    def at(self, s: int) -> datetime:
        """Instant ``s`` as an aware datetime."""
        return self.t0 + timedelta(seconds=s)

    def instant(self, moment: datetime) -> int:
        """An aware datetime as a whole instant (seconds since t0, floored)."""
        return int((moment - self.t0).total_seconds() // 1)

    # -- what the site says, read directly ---------------------------------------------
    def version_at(self, page: int, s: int) -> int:
        """Page ``page``'s content version at ``s``."""
        return self.pages[page].version_at(s)

    def lastmod_at(self, page: int, s: int) -> int | None:
        """The instant the sitemap's lastmod of ``page`` names when served at ``s`` (a
        date-only lastmod names its midnight); None: no lastmod."""
        p = self.pages[page]
        mode = self.spec.sections[p.section].lastmod
        if mode is None:
            return None
        if mode == "generation":
            return s  # every entry: the moment the sitemap is served
        if mode == "frozen":
            return p.modified_at(min(s, FREEZE_AT))
        modified = p.modified_at(s)
        if mode == "date":
            return modified - modified % DAY
        if mode == "bumped":
            n = int(np.searchsorted(p.bumps, s, side="right"))
            return max(modified, int(p.bumps[n - 1])) if n else modified
        return modified  # exact

    def lastmod_text(self, page: int, s: int) -> str | None:
        """The lastmod as the sitemap writes it at ``s``."""
        value = self.lastmod_at(page, s)
        if value is None:
            return None
        if self.spec.sections[self.pages[page].section].lastmod == "date":
            return self.at(value).strftime("%Y-%m-%d")
        return self.at(value).strftime("%Y-%m-%dT%H:%M:%SZ")

    # -- what the site serves -----------------------------------------------------------
    def robots_txt(self, origin: str) -> str:
        """robots.txt: one disallowed area, the sitemap declared."""
        return f"User-agent: *\nDisallow: /account/\n\nSitemap: {origin}/sitemap.xml\n"

    def sitemap_xml(self, origin: str, s: int) -> str:
        """The sitemap at ``s``: an index of ``/sitemap-SECTION.xml`` with two sections."""
        if len(self.spec.sections) > 1:
            items = "".join(
                f"<sitemap><loc>{origin}/sitemap-{name}.xml</loc></sitemap>\n"
                for name in self.spec.sections
            )
            return _xml("sitemapindex", items)
        return self.section_xml(next(iter(self.spec.sections)), origin, s)

    def section_xml(self, section: str, origin: str, s: int) -> str:
        """The urlset of one section at ``s``."""
        lines = []
        for i, page in enumerate(self.pages):
            if page.section != section:
                continue
            lastmod = self.lastmod_text(i, s)
            tag = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
            loc = html.escape(origin + page.path, quote=False)
            lines.append(f"<url><loc>{loc}</loc>{tag}</url>\n")
        return _xml("urlset", "".join(lines))

    def page_html(self, path: str, s: int) -> tuple[str, int] | None:
        """The page at ``s`` and its version, with boilerplate that changes on every
        request (the demo's page shape); None: no such page."""
        index = self.by_path.get(path)
        if index is None:
            return None
        page = self.pages[index]
        version = page.version_at(s)
        section = self.spec.sections[page.section]
        title = f"{page.section.title()} {page.index}"
        body = "".join(f"<p>{html.escape(t)}</p>" for t in _paragraphs(self.name, page, version))
        kind = section.structured if page.structured else None
        head, article, meta = _structured(kind, self, page, title, s)
        token = f"{self._render.getrandbits(64):016x}"
        trending = self._render.choice(WORDS)
        text = (
            f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
            f"{head}</head><body><header><nav><a href='/'>Home</a> "
            f"<a href='/{page.section}/0'>{page.section}</a></nav></header>"
            f"<aside class='trending'>Trending now: {trending}</aside>"
            f"<main><article{article}><h1>{title}</h1>{meta}{body}"
            f"</article></main><form class='newsletter'><input type='hidden' name='csrf' "
            f"value='{token}'><input name='email'></form>"
            f"<footer>Rendered at {self.at(s).isoformat()} by planbench</footer></body></html>"
        )
        return text, version


@dataclass
class World:
    """A fleet of sites on one timeline, from ``t0`` (day 0) for ``days`` days."""

    sites: list[PlanSite]
    t0: datetime
    days: int
    seed: int

    def at(self, s: int) -> datetime:
        """Instant ``s`` as an aware datetime."""
        return self.t0 + timedelta(seconds=s)

    @property
    def end(self) -> int:
        """The last instant of the run (exclusive)."""
        return self.days * DAY


def make_world(
    sites: int = 24,
    pages: int = 200,
    days: int = 28,
    seed: int = 1,
    *,
    t0: datetime | None = None,
    specs: tuple[SiteSpec, ...] = SPECS,
    mix: tuple[RateClass, ...] = RATE_MIX,
) -> World:
    """A fleet of ``sites`` (``specs`` in turn), ``pages`` pages each (split evenly between
    a site's sections), its events drawn from ``seed``. ``t0`` defaults to the midnight
    UTC ``days + 2`` days ago, so nothing the sites say is in the real future."""
    if t0 is None:
        today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        t0 = today - timedelta(days=days + 2)
    end = (days + 1) * DAY
    fleet = []
    for n in range(sites):
        spec = specs[n % len(specs)]
        name = spec.name if n < len(specs) else f"{spec.name}-{n // len(specs) + 1}"
        rng = np.random.default_rng([seed, n])
        site_pages = _pages(spec, pages, end, rng, mix)
        host = f"127.0.{n // 250}.{n % 250 + 2}"
        fleet.append(PlanSite(name, spec, t0, site_pages, seed=seed * 1_000 + n, host=host))
    return World(fleet, t0, days, seed)


def _pages(
    spec: SiteSpec, count: int, end: int, rng: np.random.Generator, mix: tuple[RateClass, ...]
) -> list[PlanPage]:
    names = list(spec.sections)
    shares = np.array([c.share for c in mix])
    placed: dict[str, int] = dict.fromkeys(names, 0)
    pages = []
    for i in range(count):
        section = names[i * len(names) // count]  # the first half, then the second
        index, placed[section] = placed[section], placed[section] + 1
        cls = mix[int(rng.choice(len(mix), p=shares / shares.sum()))]
        rate = float(np.exp(rng.uniform(np.log(cls.low), np.log(cls.high))))
        created = -int(rng.uniform(*CREATED_DAYS) * DAY)
        page = PlanPage(
            f"/{section}/{index}",
            section,
            index,
            rate,
            cls.name,
            created,
            _poisson(rng, rate, created, end),
        )
        behaviour = spec.sections[section]
        if behaviour.lastmod == "bumped":
            page.bumps = _poisson(rng, BUMP_RATE, -30 * DAY, end)
        page.structured = behaviour.structured is not None and bool(rng.random() < behaviour.share)
        pages.append(page)
    return pages


def _poisson(rng: np.random.Generator, rate: float, start: int, end: int) -> np.ndarray:
    """A Poisson process of ``rate`` per day on (start, end), as sorted unique instants."""
    count = int(rng.poisson(rate * (end - start) / DAY))
    moments = rng.integers(start + 1, end, size=count, dtype=np.int64)
    return np.unique(moments)


def _paragraphs(site: str, page: PlanPage, version: int) -> list[str]:
    """The page's text at ``version``: each new version rewrites one of its paragraphs."""
    texts = []
    for k in range(_PARAGRAPHS):
        edits = (version + _PARAGRAPHS - 1 - k) // _PARAGRAPHS  # versions that rewrote k
        rng = random.Random(f"{site}:{page.path}:{k}:{edits}")
        texts.append(" ".join(rng.choice(WORDS) for _ in range(24)).capitalize() + ".")
    return texts


def _structured(
    kind: str | None, site: PlanSite, page: PlanPage, title: str, s: int
) -> tuple[str, str, str]:
    """(head, article attributes, article meta) carrying the page's dateModified."""
    if kind is None:
        return "", "", ""
    published = site.at(page.created).isoformat()
    modified = site.at(s if kind == "json-ld-render" else page.modified_at(s)).isoformat()
    return article_markup(kind, title, published, modified)


def _xml(root: str, items: str) -> str:
    ns = "http://www.sitemaps.org/schemas/sitemap/0.9"
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<{root} xmlns="{ns}">\n{items}</{root}>\n'

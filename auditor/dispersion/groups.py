"""The groups one sub-sitemap's URLs fall into, so that each material group can be judged alone.

Static-site generators list several page types in one file: a Hexo blog's posts
(``/2020/05/03/slug/``, lastmod = the post's own date) beside its home, tag, category and
pagination pages (lastmod = the build date); Hugo's ``/posts/*`` beside ``/tags/*`` and
``/categories/*`` (lastmod = the newest member post, so they move on every new post);
WordPress single-file plugins mix pages and posts. :func:`find_groups` learns a
:class:`Grouping` from one sub-sitemap; :meth:`Grouping.labels` then names the group of any
URL, listed or not (past runs' pages, crawl-log URLs), from its string alone.

**Templates (URL shape).** Every URL gets one *template*, a function of its string and
of the learned *base* (the longest directory all the file's URLs share, e.g.
``/pymdown-extensions/`` for a project site on GitHub Pages, so a site under a path
groups as one at the root would):

- the home page (the base itself, or ``index.html`` under it): ``/``;
- pagination anywhere (``/page/2/``, ``/tags/x/page/3/``): ``*/page/N/``;
- date paths, a first segment that is a year 1900-2099 (``/2020/05/03/slug/``,
  ``/2020/05/slug/``): one template, named ``/YYYY/MM/DD/*`` (or ``/YYYY/MM/*``,
  ``/YYYY/*``) after the depth most of them have;
- otherwise the first path segment: ``/tags/*``, ``/categories/*``, ``/posts/*``,
  ``/docs/*`` (the section's own index, ``/tags/``, belongs to it).

A first segment held by fewer than ``MIN_TEMPLATE_URLS`` URLs is a page name, not a
section (``/about/``, ``/Spring/index.html``): it folds into ``other`` at once.

**Lastmod behaviour.** A *class* is a set of URLs that behave as one: all carrying one
shared value, all undated, or (with the previous walk) all moved since then. A class
*claims* each template (of at least ``MIN_TEMPLATE_URLS`` URLs, or the home page or
pagination) of which it holds ``CLAIM_SHARE`` of the URLs (for *moved*, of the URLs dated
in both walks, of which there must be ``MIN_TEMPLATE_URLS``, so that a section renamed
between the walks is not claimed on the one URL it kept). When a class claims two
templates or more and they hold a material share, they merge into one group (basis
``lastmod``), named after its templates (``/ + /categories/* + /tags/*``).

Lastmod splits only ever follow URL shapes, for three reasons found on the real data:
a label must be computable for a URL never seen (a template is; a lastmod value of the
past is not); on an honest date-only site the pages edited on one day are a scatter
inside templates, never nine in ten of one, so they cannot claim anything (no noise
split); and the generators' own behaviours (build date on list pages, Hugo's taxonomy
pages moving with every post) are per template. ``other``
is never claimed: it is the fold of one-off pages and the label of every unknown shape.

**When not to split.** When one class holds ``1 - MATERIAL_SHARE`` of all URLs (MkDocs'
build date on every page, a file without any lastmod, a sitemap that moved as one):
that is one behaviour, which the dispersion flags already judge. When the sub-sitemap
has fewer than ``2 * MIN_GROUP_URLS`` URLs. When one group holds ``1 - MATERIAL_SHARE``
of the URLs. Otherwise every template (or merged templates) holding at least
``max(MIN_GROUP_URLS, MATERIAL_SHARE * urls)`` URLs is a group, and the rest fold into
``other``. ``other`` is listed whenever it holds URLs, even below the material share,
so that the groups' sizes add up to the file and every label is a listed pattern
(moving the leftovers into a named group would misname them).

**Thresholds.** ``MATERIAL_SHARE = 0.10``: on the real sites (``tests/benchmarks/
list_groups.py``) the page types that matter hold 12% to 75% (Hugo categories 12% of
137 URLs, tags 24-56%, posts 31-74%, Hexo date posts 34-38%), while a one-off page
holds 2% of a small site; a smaller share would make segments whose verdict rests on a
handful of pages.
``MIN_GROUP_URLS = 10``: the scorer needs ``MIN_DATE_COMPARISONS = 10`` dated pages for
a date verdict (:mod:`auditor.scorer.rules`), so a smaller group could never be judged
alone. ``MIN_TEMPLATE_URLS = 3``: a first segment two pages share is still a coincidence
of names; three is a section. ``CLAIM_SHARE = 0.9``: generators stamp list pages all
alike (100% on the real Hexo and MkDocs builds); nine in ten leaves room for a page
edited by hand while keeping a same-day edit of part of a section from claiming it.

**Known misses.** The Hexo build of the real data (56 URLs) stamps its home and four
tag pages with the build date: 5 URLs, 9%, below both thresholds, so they stay in
``other`` beside section indexes with a constant date. A section index whose lastmod
behaves unlike its leaves (docs generators) is labelled with its section: a "list
page" rule (a URL that prefixes other listed URLs) would need the listed URLs to label
an unseen one, and no real sitemap at hand had such indexes in a material share.

**Cost.** One regex pass in pyarrow's compute kernels (RE2, in C++) extracts the first
segment of every URL, one more marks pagination; templates are then decided on the
distinct first segments, not per URL, and the classes are counted with numpy
(``bincount`` over template codes). No Python object per URL beyond the input list
(``tests/benchmarks/bench_groups.py``). A file of at most ``FEW_URLS`` (1,000) URLs is read
in Python's ``re`` instead, with the same result (:mod:`auditor.dispersion.templates`).

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from auditor.dispersion.templates import (
    DATE,
    HOME,
    PAGE,
    REST,
    STRUCTURAL,
    Segments,
    UrlList,
    segment_names,
    segment_positions,
)

__all__ = [
    "CLAIM_SHARE",
    "MATERIAL_SHARE",
    "MIN_GROUP_URLS",
    "MIN_TEMPLATE_URLS",
    "OTHER",
    "Group",
    "Grouping",
    "find_groups",
]

#: A group needs this share of the sub-sitemap's URLs (see the module docstring).
MATERIAL_SHARE = 0.10
#: ... and at least this many URLs: the scorer's MIN_DATE_COMPARISONS.
MIN_GROUP_URLS = 10
#: A first path segment shared by fewer URLs is a page name, not a section.
MIN_TEMPLATE_URLS = 3
#: A lastmod class claims a template when it holds this share of the template's URLs.
CLAIM_SHARE = 0.9
#: The rest group: one-off pages, and every URL whose shape was not learned.
OTHER = "other"

_DEPTH_SAMPLE = 10_000


@dataclass(frozen=True)
class Group:
    """One group of a sub-sitemap: its pattern, its size and the rule that found it."""

    pattern: str
    urls: int
    basis: str  # "url-shape" or "lastmod"

    def to_dict(self) -> dict[str, object]:
        """The group as plain JSON values."""
        return {"pattern": self.pattern, "urls": self.urls, "basis": self.basis}


@dataclass(frozen=True)
class Grouping:
    """The groups learned from one sub-sitemap, and how to label any URL with them.

    ``groups`` is empty when the sub-sitemap is one behaviour (not split); then every
    label is None. ``base`` is the directory every learned URL shared; ``members`` maps
    each template key to its group's pattern (a key not listed labels as ``other``).
    """

    groups: tuple[Group, ...] = ()
    base: str = "/"
    members: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @cached_property
    def _label_of_key(self) -> dict[str, str]:
        return dict(self.members)

    def labels(self, locs: Sequence[str] | np.ndarray) -> list[str | None]:
        """Each loc's group pattern, in order; all None when the file was not split."""
        if not self.groups:
            return [None] * len(locs)
        codes, dictionary = UrlList(locs).template_codes(self.base)
        known = self._label_of_key
        segments = [key for key in known if key not in STRUCTURAL]
        found = segment_positions(dictionary, segments)
        patterns = np.array([*(known[key] for key in segments), OTHER], dtype=object)
        structural = np.array([known.get(key, OTHER) for key in STRUCTURAL], dtype=object)
        table = np.concatenate([structural, patterns[found]])
        labels: list[str | None] = table[codes].tolist()
        return labels

    def label_of(self, loc: str) -> str | None:
        """One loc's group pattern (None when the file was not split)."""
        return self.labels([loc])[0]

    def to_dict(self) -> dict[str, object]:
        """The groups and the labelling rule as plain JSON values (:meth:`from_dict`)."""
        return {
            "base": self.base,
            "groups": [group.to_dict() for group in self.groups],
            "members": [list(pair) for pair in self.members],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Grouping:
        """The grouping :meth:`to_dict` wrote: it labels URLs as the original did."""
        groups = data.get("groups") or []
        members = data.get("members") or []
        assert isinstance(groups, list) and isinstance(members, list)
        return cls(
            tuple(Group(str(g["pattern"]), int(g["urls"]), str(g["basis"])) for g in groups),
            str(data.get("base") or "/"),
            tuple((str(key), str(pattern)) for key, pattern in members),
        )

    def is_material(self, pattern: str) -> bool:
        """True when the group ``pattern`` holds a material share of the learned URLs
        (``other`` may hold less: its verdict then does not speak for the file)."""
        total = sum(g.urls for g in self.groups)
        size = next((g.urls for g in self.groups if g.pattern == pattern), 0)
        return size >= max(MIN_GROUP_URLS, MATERIAL_SHARE * total)


def find_groups(
    locs: Sequence[str] | np.ndarray,
    lastmod_seconds: np.ndarray,
    dated: np.ndarray,
    previous_seconds: np.ndarray | None = None,
    previous_dated: np.ndarray | None = None,
) -> Grouping:
    """The groups of one sub-sitemap's URLs (module docstring), learned from its locs and
    lastmods (int64 seconds, meaningful where ``dated``), and with the previous walk's
    lastmods aligned by row (``previous_dated`` False where the URL was not listed)."""
    urls = len(locs)
    if urls < 2 * MIN_GROUP_URLS:
        return Grouping()
    dated = np.asarray(dated, dtype=bool)
    seconds = np.asarray(lastmod_seconds, dtype=np.int64)
    classes = list(_classes(seconds, dated, previous_seconds, previous_dated))
    if any(int(mask.sum()) >= (1 - MATERIAL_SHARE) * urls for mask, _ in classes):
        return Grouping()
    listed = UrlList(locs)
    base = listed.common_base()
    codes, keys = _compact(*listed.template_codes(base))
    members = _members(codes, keys, classes, _threshold(urls))
    return _grouping(codes, keys, members, base, _date_pattern(listed, base, codes, keys))


def _threshold(urls: int) -> float:
    return max(float(MIN_GROUP_URLS), MATERIAL_SHARE * urls)


def _compact(codes: np.ndarray, dictionary: Segments) -> tuple[np.ndarray, list[str]]:
    """Codes into a short key list: the first segments of fewer than MIN_TEMPLATE_URLS
    URLs fold into the rest (home, pagination and dates are templates at any size)."""
    structural = len(STRUCTURAL)
    counts = np.bincount(codes, minlength=structural + len(dictionary))
    kept = counts > 0
    kept[structural:] &= counts[structural:] >= MIN_TEMPLATE_URLS
    kept[STRUCTURAL.index(REST)] = True
    lookup = np.cumsum(kept) - 1
    lookup[~kept] = lookup[STRUCTURAL.index(REST)]
    segments = segment_names(dictionary, np.flatnonzero(kept[structural:]))
    names = [STRUCTURAL[i] for i in np.flatnonzero(kept[:structural])] + segments
    return lookup[codes], [str(name) for name in names]


def _classes(
    seconds: np.ndarray,
    dated: np.ndarray,
    previous_seconds: np.ndarray | None,
    previous_dated: np.ndarray | None,
) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """The lastmod classes, largest shared values first: (members, comparable rows), the
    comparable rows being those a share is measured on (None: all rows)."""
    values, counts = np.unique(seconds[dated], return_counts=True)
    for value in values[np.argsort(-counts, kind="stable")][: int(1 / MATERIAL_SHARE) + 1]:
        yield dated & (seconds == value), None
    yield ~dated, None
    if previous_seconds is not None and previous_dated is not None:
        both = dated & np.asarray(previous_dated, dtype=bool)
        yield both & (seconds != np.asarray(previous_seconds, dtype=np.int64)), both


def _members(
    codes: np.ndarray,
    keys: list[str],
    classes: list[tuple[np.ndarray, np.ndarray | None]],
    threshold: float,
) -> dict[int, str]:
    """Each grouped template code with its group's pattern basis: "lastmod:<n>" for the
    n-th merged class, "url-shape" for a material template alone."""
    counts = np.bincount(codes, minlength=len(keys))
    claimable = np.array([key != REST for key in keys]) & (counts > 0)
    enough = np.array([1 if key in (HOME, PAGE) else MIN_TEMPLATE_URLS for key in keys])
    members: dict[int, str] = {}
    for number, (mask, comparable) in enumerate(classes):
        within = np.bincount(codes[mask], minlength=len(keys))
        measured = counts
        if comparable is not None:
            measured = np.bincount(codes[comparable], minlength=len(keys))
        share = np.divide(within, measured, out=np.zeros(len(keys)), where=measured >= enough)
        claimed = np.flatnonzero(claimable & (share >= CLAIM_SHARE))
        if len(claimed) >= 2 and counts[claimed].sum() >= threshold:
            members.update({int(code): f"lastmod:{number}" for code in claimed})
            claimable[claimed] = False
    for code in np.flatnonzero(claimable & (counts >= threshold)):
        members[int(code)] = "url-shape"
    return members


def _date_pattern(listed: UrlList, base: str, codes: np.ndarray, keys: list[str]) -> str:
    """The date template's name after the depth most of its URLs have (of an even
    sample of ``_DEPTH_SAMPLE``: a majority needs no more)."""
    if DATE not in keys:
        return base + "YYYY/*"
    rows = np.flatnonzero(codes == keys.index(DATE))
    sample = rows[:: max(1, len(rows) // _DEPTH_SAMPLE)]
    for parts, name in ((2, "YYYY/MM/DD/*"), (1, "YYYY/MM/*")):
        if listed.count_dated(sample, base, parts) * 2 >= len(sample):
            return base + name
    return base + "YYYY/*"


def _pattern(key: str, base: str, date_pattern: str) -> str:
    names = {HOME: base, PAGE: "*/page/N/", DATE: date_pattern, REST: OTHER}
    return names.get(key, f"{base}{key}/*")


def _grouping(
    codes: np.ndarray,
    keys: list[str],
    members: Mapping[int, str],
    base: str,
    date_pattern: str,
) -> Grouping:
    """The groups (largest first) and the key-to-pattern map, or no split."""
    counts = np.bincount(codes, minlength=len(keys))
    by_basis: dict[str, list[int]] = {}
    for code, basis in members.items():
        name = basis if basis.startswith("lastmod") else f"shape:{code}"
        by_basis.setdefault(name, []).append(code)
    groups: list[Group] = []
    labels: dict[str, str] = {}
    for name, group_codes in by_basis.items():
        patterns = sorted(_pattern(keys[c], base, date_pattern) for c in group_codes)
        pattern = " + ".join(patterns)
        basis = "lastmod" if name.startswith("lastmod") else "url-shape"
        groups.append(Group(pattern, int(counts[group_codes].sum()), basis))
        labels.update({keys[c]: pattern for c in group_codes})
    rest = int(len(codes) - sum(group.urls for group in groups))
    if rest:
        groups.append(Group(OTHER, rest, "url-shape"))
    if len(groups) < 2 or max(g.urls for g in groups) >= (1 - MATERIAL_SHARE) * len(codes):
        return Grouping()
    groups.sort(key=lambda g: (-g.urls, g.pattern))
    return Grouping(tuple(groups), base, tuple(sorted(labels.items())))

"""A site's template, learned from the pages one run fetched: the blocks many pages share.

Bar-Yossef and Rajagopalan (WWW 2002) call a template the pagelets that recur on
many pages of a site; Yi, Liu and Li (KDD 2003) add that noise shares its *style*
(its place in the page) as well as its content, while main content varies inside the
same style. Both ideas, on the blocks of :mod:`auditor.evidence.segment`:

- a block is template when its text recurs on at least ``max(MIN_PAGES, MIN_SHARE · n)``
  of the ``n`` pages (a footer, a sidebar entry, a cookie notice, a "posts in this
  series" box on the series' pages);
- and it fills its slot (its tag path) on at least ``SLOT_SHARE`` of the pages that have
  that slot: a price "19.90" that a third of the products share sits in a slot whose
  text varies from page to page, so it stays content, while a recent-posts entry on
  every blog post is template even when other kinds of pages lack the sidebar.

Learned per site and per sub-sitemap (a blog's sidebar may be on a third of the site
but on every page of the blog): a block is template when either says so.

The template also keeps its *slots*: each template text with the tag paths where it
fills its slot. A page that holds a template text in its slot and again elsewhere (a
licence page quoting the footer's copyright line, a post's own title that the
recent-posts box of every page lists) has its own copy of it, which is content.

Touches: nothing.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from auditor.evidence.blocks import Block

__all__ = ["MIN_PAGES", "MIN_SHARE", "SLOT_SHARE", "Template", "learn_template", "learn_templates"]

#: Fewest pages a block must recur on to be template (two pages sharing a block may be a
#: coincidence, or a page and its copy).
MIN_PAGES = 3
#: Share of the pages a block must recur on to be template.
MIN_SHARE = 0.3
#: Share of the pages having a block's slot that must show this very block.
SLOT_SHARE = 0.5


@dataclass(frozen=True)
class Template:
    """The block hashes that are template, how many pages they were learned from, the
    hashes that are *common* (on at least half as many pages as template needs: a block
    just under the bar in one run's sample is still there, not gone), and the template's
    slots: (hash, tag path) where each template text fills its slot."""

    hashes: frozenset[int]
    pages: int
    common: frozenset[int] = frozenset()
    slots: frozenset[tuple[int, int]] = frozenset()

    def __contains__(self, block_hash: object) -> bool:
        return block_hash in self.hashes

    def __or__(self, other: Template) -> Template:
        return Template(
            self.hashes | other.hashes,
            max(self.pages, other.pages),
            self.common | other.common,
            self.slots | other.slots,
        )


def learn_template(pages: Sequence[Sequence[Block]]) -> Template:
    """The template of a group of pages (module docstring); none under MIN_PAGES pages."""
    n = len(pages)
    if n < MIN_PAGES:
        return Template(frozenset(), n)
    need = max(MIN_PAGES, math.ceil(MIN_SHARE * n))
    on_pages: Counter[int] = Counter()
    in_slot: Counter[tuple[int, int]] = Counter()
    slots: Counter[int] = Counter()
    for blocks in pages:
        pairs = {(b.hash, b.path) for b in blocks}
        on_pages.update({h for h, _ in pairs})
        in_slot.update(pairs)
        slots.update({p for _, p in pairs})
    frequent = {h for h, count in on_pages.items() if count >= need}
    filled = frozenset(
        (h, path)
        for (h, path), count in in_slot.items()
        if h in frequent and count >= SLOT_SHARE * slots[path]
    )
    template = {h for h, _ in filled}
    common = {h for h, count in on_pages.items() if count >= max(2, need / 2)}
    return Template(frozenset(template), n, frozenset(common | template), filled)


def learn_templates(
    groups: Mapping[str, Sequence[Sequence[Block]]],
) -> tuple[Template, dict[str, Template]]:
    """The site's template, learned from all groups together, and each group's (a
    sub-sitemap's) joined with the site's."""
    site = learn_template([page for pages in groups.values() for page in pages])
    return site, {name: site | learn_template(pages) for name, pages in groups.items()}

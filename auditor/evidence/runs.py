"""Two runs' samples of one site, compared: each re-fetched page's change, and the template's.

1. Each run's template is learned from all the pages that run read (per site and per
   sub-sitemap, :mod:`auditor.evidence.template`). A block that is template in one run
   and rare in the other came or went with the template (a sidebar entry added between
   the runs is template in the second): its difference is a template change. A block
   that is template in one run and still common in the other did not move with the
   template: a page that gains or loses it alone changed (a product losing its shared
   "Colour: green" row).
2. A difference that shows *identically* on most re-fetched pages (the same block added,
   or removed, on at least ``max(MIN_PAGES, SHARED_SHARE · compared)`` of them) is a
   template change too, even where the template learned from one run missed it; so is
   a change of case in the same slot (tag path) on as many pages (a theme writing every
   title in capitals: each page's title differs, the change is the theme's).
3. Each re-fetched page is then compared block by block (:mod:`auditor.evidence.change`).
   Where its whole main text (the case-folded ``exact`` hash) is the same in both runs,
   it did not change, unless its words changed case (which that hash cannot see).
4. The site's template changed when at least half of the compared pages show template
   differences; the regions named are those that differ on at least half of those pages.

Touches: nothing.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Container, Sequence
from dataclasses import dataclass, replace

from auditor.evidence.blocks import Block, decode_blocks
from auditor.evidence.change import FrameNoise, PageChange, compare_blocks, compare_exact
from auditor.evidence.fingerprint import simhash_distance
from auditor.evidence.matching import recased_slots
from auditor.evidence.template import MIN_PAGES, learn_templates

__all__ = [
    "SHARED_SHARE",
    "Fetch",
    "RunComparison",
    "TemplateChange",
    "compare_runs",
    "template_change",
]

#: Share of the compared pages on which one same difference makes it a template change.
SHARED_SHARE = 0.5


@dataclass(frozen=True)
class Fetch:
    """One page of one run, as the comparison needs it: its key (the URL), its group (the
    sub-sitemap), and its fingerprints (``blocks`` as encoded; empty when absent)."""

    key: str
    group: str
    exact: str | None
    simhash: int | None = None
    blocks: bytes | None = None


@dataclass(frozen=True)
class TemplateChange:
    """The site's template changed between the runs: on how many of the compared pages,
    and where ("footer", "sidebar")."""

    pages: int
    compared: int
    regions: tuple[str, ...]

    def detail(self) -> str:
        """In words, for a note in the result and the report."""
        where = ", ".join(self.regions) or "page frame"
        return (
            f"the site's template changed between runs: {where}"
            f" (on {self.pages} of {self.compared} re-fetched pages; not counted as content change)"
        )


@dataclass(frozen=True)
class RunComparison:
    """Each re-fetched page's change (by key), each with its simhash distance, and the
    template change, if any."""

    pages: dict[str, PageChange]
    distances: dict[str, int]
    template: TemplateChange | None


def compare_runs(
    current: Sequence[Fetch], previous: Sequence[Fetch], steady: Container[str] | None = None
) -> RunComparison:
    """Compare the pages read in both runs (module docstring). ``steady``: the keys of the
    pages that, by their lastmod, did not change between the runs; a frame slot whose text
    differs on most of them is restless, and no page's own (``FrameNoise.paths``)."""
    new_blocks, old_blocks = _decoded(current), _decoded(previous)
    templates = _templates(new_blocks, current, old_blocks, previous)
    before = {f.key: f for f in previous if f.exact is not None}
    pairs = [(before[f.key], f) for f in current if f.exact is not None and f.key in before]
    with_blocks = [
        (old, new) for old, new in pairs if old.key in old_blocks and new.key in new_blocks
    ]
    compared = [(old_blocks[o.key], new_blocks[n.key]) for o, n in with_blocks]
    shared, shared_slots, noise = _shared_differences(compared)
    if steady is not None:
        calm = [(old_blocks[o.key], new_blocks[n.key]) for o, n in with_blocks if n.key in steady]
        noise = replace(noise, paths=_restless_paths(calm))
    case_slots = _shared_case_changes(compared)
    changes: dict[str, PageChange] = {}
    distances: dict[str, int] = {}
    for old, new in pairs:
        if old.key in old_blocks and new.key in new_blocks:
            either, both, slots = templates.get(new.group, (frozenset(),) * 3)
            change = compare_blocks(
                old_blocks[old.key],
                new_blocks[new.key],
                either | shared,
                both - shared,
                slots | shared_slots,
                case_slots,
                noise,
            )
            if old.exact == new.exact and change.changed and not change.recased:
                change = PageChange(
                    False, 0.0, "unchanged", change.template_regions,
                    own_regions=change.own_regions,
                )  # fmt: skip
        else:
            change = compare_exact(old.exact or "", new.exact or "")
        changes[new.key] = change
        if old.simhash is not None and new.simhash is not None:
            distances[new.key] = simhash_distance(old.simhash, new.simhash)
    regions = [c.template_regions for c in changes.values()]
    return RunComparison(changes, distances, template_change(regions))


def _decoded(fetches: Sequence[Fetch]) -> dict[str, tuple[Block, ...]]:
    decoded = {}
    for fetch in fetches:
        blocks = decode_blocks(fetch.blocks) if fetch.exact is not None else ()
        if blocks:
            decoded[fetch.key] = blocks
    return decoded


def _templates(
    new_blocks: dict[str, tuple[Block, ...]],
    current: Sequence[Fetch],
    old_blocks: dict[str, tuple[Block, ...]],
    previous: Sequence[Fetch],
) -> dict[str, tuple[frozenset[int], frozenset[int], frozenset[tuple[int, int]]]]:
    """Per group, the template hashes of either run, the stable ones (template in one run
    and common in the other), and either run's template slots (a group one run lacks has
    that run's site template)."""
    runs = [
        learn_templates(_grouped(blocks, fetches))
        for blocks, fetches in ((new_blocks, current), (old_blocks, previous))
    ]
    groups = {f.group for f in current} | {f.group for f in previous}
    out = {}
    for group in groups:
        (new_site, new_per), (old_site, old_per) = runs
        now, then = new_per.get(group, new_site), old_per.get(group, old_site)
        either = now.hashes | then.hashes
        stable = (now.hashes & then.common) | (then.hashes & now.common)
        out[group] = (either, stable, now.slots | then.slots)
    return out


def _grouped(
    blocks: dict[str, tuple[Block, ...]], fetches: Sequence[Fetch]
) -> dict[str, list[tuple[Block, ...]]]:
    groups: dict[str, list[tuple[Block, ...]]] = defaultdict(list)
    for fetch in fetches:
        if fetch.key in blocks:
            groups[fetch.group].append(blocks[fetch.key])
    return groups


def _shared_differences(
    pairs: list[tuple[tuple[Block, ...], tuple[Block, ...]]],
) -> tuple[frozenset[int], frozenset[tuple[int, int]], FrameNoise]:
    """Block hashes added (or removed) on most compared pages: a template change; the
    slots (hash and tag path) where most pages show it; and what is no page's own frame
    (:class:`~auditor.evidence.change.FrameNoise`): the hashes added (or removed)
    identically on at least :data:`MIN_PAGES` pages, however few that is of the panel (a
    tag cloud reordered on every tag page, while the tag pages are a fifth of the panel)."""
    need = max(MIN_PAGES, math.ceil(SHARED_SHARE * len(pairs)))
    if len(pairs) < MIN_PAGES:
        return frozenset(), frozenset(), FrameNoise()
    added: Counter[int] = Counter()
    removed: Counter[int] = Counter()
    in_slot: Counter[tuple[int, int]] = Counter()
    for old, new in pairs:
        old_slots, new_slots = {(b.hash, b.path) for b in old}, {(b.hash, b.path) for b in new}
        old_hashes, new_hashes = {h for h, _ in old_slots}, {h for h, _ in new_slots}
        added.update(new_hashes - old_hashes)
        removed.update(old_hashes - new_hashes)
        in_slot.update((new_slots - old_slots) | (old_slots - new_slots))
    hashes = frozenset(h for counts in (added, removed) for h, n in counts.items() if n >= need)
    slots = frozenset(s for s, n in in_slot.items() if n >= need and s[0] in hashes)
    recurring = frozenset(
        h for counts in (added, removed) for h, n in counts.items() if n >= MIN_PAGES
    )
    return hashes, slots, FrameNoise(recurring)


def _restless_paths(pairs: list[tuple[tuple[Block, ...], tuple[Block, ...]]]) -> frozenset[int]:
    """The tag paths whose text differs on most of ``pairs`` (pages that did not change
    by their lastmod), whatever it says: a "trending now" box drawn at random on every
    request. Only unchanged pages can show it: on pages picked for a moved lastmod, a
    breadcrumb added by the same commit to each is their own frame."""
    need = max(MIN_PAGES, math.ceil(SHARED_SHARE * len(pairs)))
    if len(pairs) < need:
        return frozenset()
    paths: Counter[int] = Counter()
    for old, new in pairs:
        old_slots, new_slots = {(b.hash, b.path) for b in old}, {(b.hash, b.path) for b in new}
        paths.update({p for _, p in (new_slots - old_slots) | (old_slots - new_slots)})
    return frozenset(p for p, n in paths.items() if n >= need)


def _shared_case_changes(pairs: list[tuple[tuple[Block, ...], tuple[Block, ...]]]) -> set[int]:
    """The slots (tag paths) where most compared pages show a change of case."""
    need = max(MIN_PAGES, math.ceil(SHARED_SHARE * len(pairs)))
    if len(pairs) < need:
        return set()
    pages: Counter[int] = Counter()
    for old, new in pairs:
        pages.update(recased_slots(old, new))
    return {path for path, n in pages.items() if n >= need}


def template_change(regions: Sequence[tuple[str, ...]]) -> TemplateChange | None:
    """The site's template change from each compared page's template regions (empty for a
    page whose template did not differ): at least half of the pages (and two) differ, and
    the regions named differ on at least half of those."""
    differing = [r for r in regions if r]
    if not regions or len(differing) < max(2, math.ceil(len(regions) / 2)):
        return None
    counts = Counter(region for page in differing for region in page)
    named = tuple(r for r, n in counts.most_common() if n * 2 >= len(differing))
    return TemplateChange(len(differing), len(regions), named)

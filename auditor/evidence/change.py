"""Did a page's main content change between two fetches? How much, and where?

Two fetches of a page are compared block by block (:mod:`auditor.evidence.blocks`):
blocks in both are unchanged; of the others, those that are the site's template (in
either run), page frame (navigation, footer, related links...) or outside the content
root are *template* differences; the rest are content differences. The page changed
when the content differences change its words: their bags of words (order-free
sums) differ, so a page re-cut by a new theme with the same words reads unchanged,
while a one-letter typo fix reads changed. That is the threshold: after the template
and the frame are removed, no difference in words is noise (real pages fetched twice,
and across template-only edits, leave none), and any threshold above one word would
miss typo fixes (see the evolutions in ``fixtures/evolutions``).

Lists of links inside the content root (link-dense blocks: a "more stories" box, a
table of downloads) count where they are the page's own content: on a listing page
(more link text than prose among its content) all of them, its links are its content;
on any page, those edited in place (:func:`~auditor.evidence.matching.edited_links`: an
entry whose numbers changed, ``foo-5.1.0.tar.gz`` → ``foo-5.3.0.tar.gz``, or whose
words changed case). Entries replaced by others, added or removed stay excused outside
listings: an unmarked box of other pages' titles inside the root rotates whenever a
post is published (102 of 253 real news pages of the shared corpus hold such lists).

Case: ``hash`` and ``bag`` are case-folded; when both fetches kept their blocks' case
(blocks version 3), blocks matched on their text whose words changed case only count
as edited ("1 heading recapitalised"), and words are compared with their case. A case
change in the same slot on most re-fetched pages (``case_slots``, from
:mod:`auditor.evidence.runs`: a theme writing titles in capitals) is the template's.

Pages with no blocks on one side (fetched before blocks existed, or by another
:data:`~auditor.evidence.blocks.BLOCKS_VERSION`) fall back to the whole-text ``exact``
hash, as before.

Touches: nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from auditor.evidence.blocks import REGIONS, TAGS, Block
from auditor.evidence.matching import (
    case_sum,
    differences,
    edited_links,
    knows_case,
    recased,
    without_numbers,
)

__all__ = ["FrameNoise", "PageChange", "compare_blocks", "compare_exact", "summarise_content"]

_MASK32 = 0xFFFFFFFF
_CODE = TAGS.index("code block")
#: Parts named in one summary.
MAX_PARTS = 3
#: Blocks aligned at most, after the common start and end (difflib is quadratic at worst).
MAX_ALIGNED = 300


@dataclass(frozen=True)
class FrameNoise:
    """Frame differences that are no page's own, learned from all the re-fetched pages of
    a run (:func:`auditor.evidence.runs.compare_runs`): ``hashes`` that several pages
    gained or lost identically, and tag ``paths`` whose text differs on most pages."""

    hashes: frozenset[int] = frozenset()
    paths: frozenset[int] = frozenset()

    def covers(self, block: Block) -> bool:
        """The block's difference is one many pages show, not the page's own."""
        return block.hash in self.hashes or block.path in self.paths


@dataclass(frozen=True)
class PageChange:
    """How one page differs between two fetches.

    ``changed``: its main content changed; ``share``: the share of its main-content words
    in blocks that changed (0 to 1; None when only whole-text hashes could be compared);
    ``summary``: where, in words ("+2 paragraphs in the article body", "price 19.90 →
    24.90", "1 heading recapitalised in the article body", "template only: footer");
    ``template_regions``: where its template or page frame differed; ``method``:
    ``blocks`` or ``exact`` (the whole-text fallback); ``recased``: how many of its
    changed blocks changed the case of their words only (the case-folded ``exact`` hash
    cannot see those); ``own_regions``: where its *own* frame differed, the differences
    that are the site's template (learned from either run, shared by most re-fetched
    pages, or shown identically by several) left out: a breadcrumb label or a title moved
    into its slot, not a sitewide footer year. None when only whole-text hashes could be
    compared.
    """

    changed: bool
    share: float | None
    summary: str
    template_regions: tuple[str, ...] = ()
    method: str = "blocks"
    recased: int = 0
    own_regions: tuple[str, ...] | None = ()

    @property
    def template_changed(self) -> bool:
        """Template or page-frame blocks differed."""
        return bool(self.template_regions)

    @property
    def own_frame_changed(self) -> bool | None:
        """The page's own frame differed (None: not known, whole-text comparison)."""
        return None if self.own_regions is None else bool(self.own_regions)


def compare_exact(old_exact: str, new_exact: str) -> PageChange:
    """The fallback: whole main-text hashes only."""
    changed = old_exact != new_exact
    summary = "main text changed (whole-text hash)" if changed else "unchanged"
    return PageChange(changed, None, summary, method="exact", own_regions=None)


def compare_blocks(
    old: Sequence[Block],
    new: Sequence[Block],
    template: Container[int] = frozenset(),
    stable: Container[int] = frozenset(),
    slots: Container[tuple[int, int]] | None = None,
    case_slots: Container[int] = frozenset(),
    noise: FrameNoise | None = None,
) -> PageChange:
    """Compare two fetches of a page (module docstring). ``template`` holds the hashes of
    the site's template blocks (learned from either run); ``stable`` those of them that
    were template in *both* runs: the template did not change there, so such a block
    gained or lost by this page alone (a shared "Colour: green" row of a product's specs,
    a common price) is this page's own edit, and counts when it is content. ``slots``, when
    given, are the (hash, tag path) pairs where template texts fill their slot: a page
    holding a template text in its slot and again elsewhere (a licence page quoting the
    footer) has its own copy, which is not template. ``case_slots``: tag paths where a
    case change is the template's (it shows on most re-fetched pages). ``noise`` says which
    frame differences are never a page's *own* (:class:`FrameNoise`)."""
    templated = _templated(old, template, slots) | _templated(new, template, slots)
    removed, added = differences(old, new)
    was, now = recased(old, new, removed, added)
    edited = edited_links(removed, added) | {id(b) for b in (*was, *now) if b.links}
    listing = _is_listing(old, templated) or _is_listing(new, templated)

    def counts(block: Block) -> bool:
        if id(block) in templated and block.hash not in stable:
            return False
        return block.content or (block.links and (listing or id(block) in edited))

    gone, came = [b for b in removed if counts(b)], [b for b in added if counts(b)]
    recast = [b for b in now if counts(b) and b.path not in case_slots]
    counted = {id(b) for b in (*gone, *came, *recast)}
    frame = [b for b in (*removed, *added, *now) if id(b) not in counted]
    regions = tuple(sorted({b.region_name for b in frame}, key=REGIONS.index))
    own = _own_regions(frame, templated, stable, noise or FrameNoise())
    same_words = _same_words(gone, came)
    if not recast and same_words:
        summary = "template only: " + ", ".join(regions) if regions else "unchanged"
        if gone or came:
            summary = "same words, new markup" + (f"; {summary}" if regions else "")
        return PageChange(False, 0.0, summary, regions, own_regions=own)
    before = [b for b in old if counts(b) and (id(b) not in templated or id(b) in counted)]
    after = [b for b in new if counts(b) and (id(b) not in templated or id(b) in counted)]
    total = sum(b.tokens for b in before) + sum(b.tokens for b in after)
    moved = sum(b.tokens for b in (*gone, *came)) + 2 * sum(b.tokens for b in recast)
    parts = [] if same_words else [summarise_content(before, after)]
    summary = "; ".join([*parts, *_by_region(recast, "recapitalised")])
    share = round(min(moved / total, 1.0), 4) if total else 1.0
    return PageChange(True, share, summary, regions, recased=len(recast), own_regions=own)


def _own_regions(
    frame: Sequence[Block],
    templated: Container[int],
    stable: Container[int],
    noise: FrameNoise,
) -> tuple[str, ...]:
    """The regions of the frame differences that are the page's own: not template text (a
    block of the template in either run, or a difference most re-fetched pages share), or
    template text that stayed put sitewide while this page alone gained or lost it; and
    not what ``noise`` says several re-fetched pages show."""
    own = {
        b.region_name
        for b in frame
        if (id(b) not in templated or b.hash in stable) and not noise.covers(b)
    }
    return tuple(sorted(own, key=REGIONS.index))


def _by_region(blocks: Sequence[Block], what: str) -> list[str]:
    """Parts of a summary: ``blocks`` counted by what they are, one part a region ("1
    heading recapitalised in the article body", "6 table cells edited in the article body")."""
    regions: dict[str, list[Block]] = {}
    for block in blocks:
        regions.setdefault(block.region_name, []).append(block)
    return [f"{_count(found)} {what} in the {where}" for where, found in regions.items()]


def _templated(
    blocks: Sequence[Block], template: Container[int], slots: Container[tuple[int, int]] | None
) -> set[int]:
    """The ids of a page's blocks that are template: their text is, and (with ``slots``)
    they fill a template slot, or the page holds that text in no template slot (the
    template displaced, not quoted)."""
    if slots is None:
        return {id(b) for b in blocks if b.hash in template}
    in_slot = [(b, b.hash in template and (b.hash, b.path) in slots) for b in blocks]
    slotted = {b.hash for b, filled in in_slot if filled}
    return {
        id(b) for b, filled in in_slot if filled or (b.hash in template and b.hash not in slotted)
    }


def _is_listing(blocks: Sequence[Block], templated: Container[int]) -> bool:
    prose = sum(b.tokens for b in blocks if b.content and id(b) not in templated)
    links = sum(b.tokens for b in blocks if b.links and id(b) not in templated)
    return links > prose


def _same_words(gone: Sequence[Block], came: Sequence[Block]) -> bool:
    """The same words (with their case where both fetches kept it), and the same
    punctuation in code where both fetches kept it."""
    if sum(b.tokens for b in gone) != sum(b.tokens for b in came):
        return False
    if sum(b.bag for b in gone) & _MASK32 != sum(b.bag for b in came) & _MASK32:
        return False
    if knows_case(gone) and knows_case(came) and case_sum(gone) != case_sum(came):
        return False
    code = [b for b in (*gone, *came) if b.tag == _CODE]
    if any(b.marks is None for b in code):  # a fetch of blocks version 1
        return True
    marks = [sum(b.marks or 0 for b in side if b.tag == _CODE) & _MASK32 for side in (gone, came)]
    return marks[0] == marks[1]


def summarise_content(old: Sequence[Block], new: Sequence[Block]) -> str:
    """Where two sequences of content blocks differ, in words: "+2 paragraphs in the
    article body", "1 paragraph edited", "price 19.90 → 24.90". The sequences are aligned
    (difflib) once their common start and end are set aside; a middle longer than
    :data:`MAX_ALIGNED` blocks is told by counts only (aligning it could take minutes)."""
    start = 0
    while start < min(len(old), len(new)) and old[start].hash == new[start].hash:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end].hash == new[-1 - end].hash:
        end += 1
    before, after = old[start : len(old) - end], new[start : len(new) - end]
    if max(len(before), len(after)) > MAX_ALIGNED:
        gone, came = differences(before, after)
        where = (came or gone or after or before)[0].region_name
        counts = [f"-{_count(gone)}"] * bool(gone) + [f"+{_count(came)}"] * bool(came)
        return f"{', '.join(counts) or 'blocks reordered'} in the {where}"
    hashes = [b.hash for b in before], [b.hash for b in after]
    matcher = SequenceMatcher(None, *hashes, autojunk=False)
    ops = [(op, before[i1:i2], after[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes()]
    ops = [(op, was, now) for op, was, now in ops if op != "equal"]
    if len(ops) > MAX_PARTS and all(len(was) == len(now) for _, was, now in ops):
        return "; ".join(_by_region([b for _, _, now in ops for b in now], "edited"))  # a table
    parts = [
        f"{_describe(op, was, now)} in the {(now or was)[0].region_name}" for op, was, now in ops
    ]
    if len(parts) > MAX_PARTS:
        parts = [*parts[:MAX_PARTS], f"{len(parts) - MAX_PARTS} more"]
    return "; ".join(parts) or "content changed"


def _describe(op: str, before: Sequence[Block], after: Sequence[Block]) -> str:
    if op == "insert":
        return "+" + _count(after)
    if op == "delete":
        return "-" + _count(before)
    if len(before) == len(after) == 1:
        numbers = _number_change(before[0], after[0])
        return numbers or f"1 {before[0].tag_name} edited"
    if [b.tag for b in before] == [b.tag for b in after]:
        return f"{_count(before)} edited"
    return f"{_count(before)} rewritten as {_count(after)}"


def _count(blocks: Sequence[Block]) -> str:
    tags = Counter(b.tag_name for b in blocks)
    return ", ".join(f"{n} {tag if n == 1 else _plural(tag)}" for tag, n in tags.most_common())


def _plural(tag: str) -> str:
    return {"quote": "quotes", "code block": "code blocks"}.get(tag, tag + "s")


def _number_change(old: Block, new: Block) -> str | None:
    """``price 19.90 → 24.90`` or ``12,400 → 12,450 residents`` when only numbers changed
    between two versions of a block."""
    if not old.numbers or len(old.numbers) != len(new.numbers):
        return None
    if without_numbers(old) != without_numbers(new):
        return None
    changes = [
        " ".join(w for w in (_context(before), f"{a} → {b}", _context(after)) if w)
        for (before, a, after), (_, b, _) in zip(old.numbers, new.numbers, strict=True)
        if a != b
    ]
    return ", ".join(changes[:2]) or None


#: Words beside a number too plain to name it ("on 12 March" reads "12 → 19 march").
_PLAIN = frozenset(
    {"the", "a", "an", "of", "on", "in", "at", "to", "for", "is", "was", "are", "has", "had",
     "by", "from", "with", "and", "or", "its", "per"}
)  # fmt: skip


def _context(word: str) -> str:
    return "" if word in _PLAIN else word

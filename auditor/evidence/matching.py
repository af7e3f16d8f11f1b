"""Which blocks of two fetches of a page are the same, and the small edits that matching
on case-folded text alone would hide.

- :func:`differences`: the blocks of each fetch missing from the other, as multisets of
  case-folded texts (matched with their place first, then on their text alone).
- :func:`recased`: of the blocks matched, those whose words changed case only ("Thesis
  title" → "Thesis Title"): told by their ``case``, when both fetches kept it
  (blocks of version 2 or 1 did not: case is then ignored, as it was).
- :func:`edited_links`: of the blocks of a list of links that differ, those edited in
  place: a block gone and a block come in the same slot with the same words but for
  their numbers (``foo-5.1.0.tar.gz`` → ``foo-5.3.0.tar.gz``). A list whose entries are
  replaced by others (a "more stories" box rotating as posts are published) has none.

Touches: nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from auditor.evidence.blocks import Block, word_hash
from auditor.evidence.text import WORD

__all__ = [
    "case_sum",
    "differences",
    "edited_links",
    "knows_case",
    "recased",
    "recased_slots",
    "unmatched",
    "without_numbers",
]

_MASK32 = 0xFFFFFFFF
_MASK16 = 0xFFFF


def differences(
    old: Sequence[Block], new: Sequence[Block], *, cased: bool = False
) -> tuple[list[Block], list[Block]]:
    """Blocks of ``old`` not in ``new`` and of ``new`` not in ``old`` (as multisets).

    Copies are matched first with their place (same text, same region and marks), then on
    their text alone: a block whose text is both in the article and in the header is
    removed from where it went missing, while a block a new theme moved out of the
    content root is no difference at all. ``cased``: texts are compared with their case."""
    placed, text = (_placed_cased, _text_cased) if cased else (_placed, _text)
    old_left, new_left = unmatched(old, new, placed)
    return unmatched(old_left, new_left, text)


def _placed(block: Block) -> tuple[int, int, int]:
    return block.hash, block.region, block.flags


def _text(block: Block) -> int:
    return block.hash


def _placed_cased(block: Block) -> tuple[int, int, int, int | None]:
    return block.hash, block.region, block.flags, block.case


def _text_cased(block: Block) -> tuple[int, int | None]:
    return block.hash, block.case


def unmatched(
    old: Sequence[Block], new: Sequence[Block], key: Callable[[Block], object]
) -> tuple[list[Block], list[Block]]:
    """The blocks of each side whose ``key`` the other side lacks (as multisets)."""
    spare = Counter(map(key, new))
    spare.subtract(map(key, old))
    removed = _take(old, Counter({k: -c for k, c in spare.items() if c < 0}), key)
    added = _take(new, Counter({k: c for k, c in spare.items() if c > 0}), key)
    return removed, added


def _take(
    blocks: Sequence[Block], wanted: Counter[object], key: Callable[[Block], object]
) -> list[Block]:
    taken = []
    for block in reversed(blocks):  # a repeated block: its last copies are the extra ones
        k = key(block)
        if wanted[k] > 0:
            wanted[k] -= 1
            taken.append(block)
    return taken[::-1]


def knows_case(blocks: Sequence[Block]) -> bool:
    """The blocks kept their ``case`` (blocks version 3). The blocks of one fetch are all
    of one version (decoded from one row, or cut by this version), so the first says for
    all: this runs on every page compared."""
    return not blocks or blocks[0].case is not None


def recased(
    old: Sequence[Block], new: Sequence[Block], removed: Sequence[Block], added: Sequence[Block]
) -> tuple[list[Block], list[Block]]:
    """The blocks matched between the fetches (all but ``removed`` and ``added``) whose
    words changed case only, on each side; none unless both fetches know their case."""
    if not (knows_case(old) and knows_case(new)):
        return [], []
    was, now = old, new
    if removed or added:
        gone, came = {id(b) for b in removed}, {id(b) for b in added}
        was, now = [b for b in old if id(b) not in gone], [b for b in new if id(b) not in came]
    if case_sum(was) == case_sum(now):  # the same texts in the same case (as good as sure)
        return [], []
    return differences(was, now, cased=True)


def case_sum(blocks: Sequence[Block]) -> int:
    """What case adds to the blocks' words, all told (16 bits, as each block's)."""
    return sum(b.case or 0 for b in blocks) & _MASK16


def recased_slots(old: Sequence[Block], new: Sequence[Block]) -> set[int]:
    """The tag paths of ``new``'s blocks whose text ``old`` holds in another case (a quick
    reading of :func:`recased`, for counting the pages a case change shows on)."""
    if not (knows_case(old) and knows_case(new)) or case_sum(old) == case_sum(new):
        return set()
    texts = {b.hash for b in old}
    cased = {(b.hash, b.case) for b in old}
    return {b.path for b in new if b.hash in texts and (b.hash, b.case) not in cased}


def edited_links(removed: Sequence[Block], added: Sequence[Block]) -> set[int]:
    """The ids of the blocks of lists of links, gone and come, that pair as one entry
    edited in place: the same slot and region, the same words but for their numbers, and
    other numbers (module docstring)."""
    waiting: dict[tuple[int, int, int, int], list[Block]] = {}
    for block in removed:
        if block.links and block.numbers:
            waiting.setdefault(_entry(block), []).append(block)
    edited: set[int] = set()
    for block in added:
        if not (block.links and block.numbers):
            continue
        candidates = waiting.get(_entry(block), [])
        at = next((i for i, c in enumerate(candidates) if _figures(c) != _figures(block)), None)
        if at is not None:
            edited.update((id(candidates.pop(at)), id(block)))
    return edited


def _entry(block: Block) -> tuple[int, int, int, int]:
    return block.path, block.region, len(block.numbers), without_numbers(block)


def _figures(block: Block) -> tuple[str, ...]:
    return tuple(number for _, number, _ in block.numbers)


def without_numbers(block: Block) -> int:
    """The block's ``bag`` without the words of its numbers."""
    numeric = sum(word_hash(w) for _, number, _ in block.numbers for w in WORD.findall(number))
    return (block.bag - numeric) & _MASK32

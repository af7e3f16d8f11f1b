"""URLs listed in more than one sub-sitemap, by pair of files, from what the walk kept.

The walker lists each URL once, under the first file that listed it; a later file that
lists it again counts it (``duplicate-url``) and names the first
:data:`~auditor.walker.pages.REPEATED_MAX` of them (``FileContent.repeated``). Looking
each up in the inventory gives the file that listed it first: the pair. A URL a file
repeats from itself is not listed in two files. When a file repeated more URLs than it
names, the counts are of those named (``exact`` false).

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from auditor.coverage.inventory import InventoryIndex, hashes_of

__all__ = ["Several", "several_of"]


@dataclass
class Several:
    """Per pair of codes (first, also) the slots listed by both; per code the slots it
    shares with another file; the locs of the first ``limit`` of each pair."""

    pairs: dict[tuple[int, int], set[int]] = field(default_factory=dict)
    examples: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    shared: dict[int, set[int]] = field(default_factory=dict)
    exact: bool = True

    @property
    def urls(self) -> int:
        """Distinct URLs listed in more than one file."""
        return len(set().union(*self.shared.values())) if self.shared else 0


def several_of(
    inventory: InventoryIndex, files: Iterable[Mapping[str, Any]], limit: int | None
) -> Several:
    """The URLs the walk's files (``file_dict`` mappings) repeated from another file."""
    found = Several()
    for file in files:
        content = file.get("content")
        if content is None or not content.duplicates:
            continue
        found.exact &= len(content.repeated) >= content.duplicates
        also = inventory.code_of(str(file["url"]))
        repeated = list(content.repeated)
        for loc, slot in zip(repeated, inventory.slots(hashes_of(repeated)).tolist(), strict=True):
            first = int(inventory.codes[slot]) if slot >= 0 else -1
            if first < 0 or first == also:
                continue
            _add(found, (first, also), slot, loc, limit)
    return found


def _add(found: Several, pair: tuple[int, int], slot: int, loc: str, limit: int | None) -> None:
    slots = found.pairs.setdefault(pair, set())
    if slot in slots:
        return
    slots.add(slot)
    examples = found.examples.setdefault(pair, [])
    if limit is None or len(examples) < limit:
        examples.append(loc)
    for code in pair:
        found.shared.setdefault(code, set()).add(slot)

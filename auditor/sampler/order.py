"""Merging candidate lists into one fetching order, so that every first few pages are a
mix the sample wants: groups in proportion to weights (:func:`interleave`), or one kind
pulled forward up to a share (:func:`lead`).

Touches: nothing.
"""

from __future__ import annotations

import math

__all__ = ["interleave", "lead"]

Candidate = tuple[int, str]  # (row, stratum)


def interleave(groups: list[list[Candidate]], weights: list[float]) -> list[Candidate]:
    """The groups merged so that every prefix holds each in about its weight's share (a
    group that runs out leaves the rest to the others)."""
    merged: list[Candidate] = []
    taken = [0] * len(groups)
    live = [i for i, group in enumerate(groups) if group and weights[i] > 0]
    while live:
        i = min(live, key=lambda j: ((taken[j] + 1) / weights[j], j))
        merged.append(groups[i][taken[i]])
        taken[i] += 1
        if taken[i] == len(groups[i]):
            live.remove(i)
    return merged


def lead(items: list[Candidate], kind: str, share: float) -> list[Candidate]:
    """``items`` in their order, except that those of stratum ``kind`` come earlier: one
    leads, then each is pulled forward while the items so far hold less than ``share`` of
    them (rounded up). None comes later than its own turn, so a prefix holds at most
    ``share`` of them or what it held in the order given, whichever is more."""
    flagged = [i for i, item in enumerate(items) if item[1] == kind]
    placed = [False] * len(items)
    merged: list[Candidate] = []
    f = k = count = 0
    while len(merged) < len(items):
        while f < len(flagged) and placed[flagged[f]]:
            f += 1
        while placed[k]:
            k += 1
        allowed = math.ceil(share * (len(merged) + 1) - 1e-9)  # 1e-9: 1/3 * 3 is 1, not 2
        i = flagged[f] if f < len(flagged) and count < allowed else k
        placed[i] = True
        merged.append(items[i])
        count += items[i][1] == kind
    return merged

"""Merging candidate lists into one fetching order, so that every first few pages are a
mix the sample wants: groups in proportion to weights (:func:`interleave`), or one kind
first and then kept to a share (:func:`spread`).

Touches: nothing.
"""

from __future__ import annotations

import math

__all__ = ["interleave", "spread"]

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


def spread(first: list[Candidate], rest: list[Candidate], share: float) -> list[Candidate]:
    """``first`` and ``rest`` merged: a ``first`` item leads, then every prefix holds at
    most ``share`` of them (rounded up) while ``rest`` lasts; each in its order."""
    merged: list[Candidate] = []
    i = j = 0
    while i < len(first) or j < len(rest):
        allowed = math.ceil(share * (i + j + 1) - 1e-9)  # 1e-9: 1/3 * 3 is not above 1
        if i < len(first) and (j == len(rest) or i < allowed):
            merged.append(first[i])
            i += 1
        else:
            merged.append(rest[j])
            j += 1
    return merged

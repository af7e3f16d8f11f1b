"""A plan's fetches as ``auditor plan`` writes them: a JSON Lines object or a CSV row
each, the same text as :meth:`~auditor.planner.make.PlannedFetch.to_dict` through
``json.dumps`` (or the csv module), made without the dict: 42 million fetches for
100,000 sites, where the dict and its encoding cost more than planning them.

Touches: nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from json.encoder import encode_basestring
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from auditor.planner.make import PlannedFetch

__all__ = ["csv_rows", "json_lines"]

#: How ``json.dumps`` writes the floats that are no numbers.
_SPECIAL = {math.inf: "Infinity", -math.inf: "-Infinity"}
#: Due times' texts kept at most (a plan's are a few: the plan's moment and its days).
_KEPT = 10_000


def _number(value: float) -> str:
    """A float as ``json.dumps`` writes it."""
    if math.isnan(value):
        return "NaN"
    return _SPECIAL.get(value) or float.__repr__(value)


class _Instants:
    """ISO texts of instants, each distinct one made once (a plan's due times are few)."""

    def __init__(self) -> None:
        self._made: dict[tuple[datetime, timedelta | None], str] = {}

    def text(self, moment: datetime) -> str:
        """``moment.isoformat()`` (equal instants at another offset write another text)."""
        key = (moment, moment.utcoffset())
        found = self._made.get(key)
        if found is None:
            if len(self._made) > _KEPT:
                self._made.clear()
            found = self._made[key] = moment.isoformat()
        return found


def json_lines(fetches: Iterable[PlannedFetch]) -> Iterator[str]:
    """Each fetch as ``json.dumps(fetch.to_dict(), ensure_ascii=False)`` writes it."""
    due = _Instants()
    for f in fetches:
        lastmod = "null" if f.lastmod is None else '"' + f.lastmod.isoformat() + '"'
        yield (
            f'{{"url": {encode_basestring(f.url)}, "site": {encode_basestring(f.site)}, '
            f'"sitemap": {encode_basestring(f.sitemap)}, "due_at": "{due.text(f.due_at)}", '
            f'"reason": {encode_basestring(f.reason)}, '
            f'"priority": {_number(round(f.priority, 6))}, '
            f'"p_changed": {_number(round(f.p_changed, 4))}, "lastmod": {lastmod}, '
            f'"verdict": {encode_basestring(f.verdict)}}}'
        )


def csv_rows(fetches: Iterable[PlannedFetch]) -> Iterator[list[str | float]]:
    """Each fetch as the CSV row of its :meth:`to_dict` values (None as '')."""
    due = _Instants()
    for f in fetches:
        yield [
            f.url,
            f.site,
            f.sitemap,
            due.text(f.due_at),
            f.reason,
            round(f.priority, 6),
            round(f.p_changed, 4),
            "" if f.lastmod is None else f.lastmod.isoformat(),
            f.verdict,
        ]

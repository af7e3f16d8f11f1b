"""A plan's fetches as ``auditor plan`` writes them: a JSON Lines object or a CSV row
each, the same text as :meth:`~auditor.planner.make.PlannedFetch.to_dict` through
``json.dumps`` (or the csv module), made without the dict: 42 million fetches for
100,000 sites, where the dict and its encoding cost more than planning them.

Touches: nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from auditor.planner.make import PlannedFetch

__all__ = ["csv_rows", "json_lines"]

#: How ``json.dumps`` writes the floats that are no numbers (``repr`` writes them so).
_SPECIAL = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
#: Numbers' texts kept at most (then forgotten, and made again as they come).
_KEPT = 10_000


def _number(value: float) -> str:
    """A number as ``json.dumps`` writes it."""
    if not isinstance(value, float):
        return json.dumps(value)
    text = float.__repr__(value)
    return _SPECIAL[text] if text[-1] > "9" else text  # a number's repr ends in a digit


def _rounded(digits: int) -> Callable[[float], str]:
    """``_number(round(value, digits))``, each value's text made once (a plan's
    priorities and chances repeat: 1.0 for every page never fetched)."""
    made: dict[float, str] = {}

    def text(value: float) -> str:
        if type(value) is not float or not value:  # 1 == 1.0, 0.0 == -0.0: not the same text
            return _number(round(value, digits))
        found = made.get(value)
        if found is None:
            if len(made) > _KEPT:
                made.clear()
            found = made[value] = _number(round(value, digits))
        return found

    return text


class _Texts:
    """The text of the last value seen, made again only when another comes (a plan's
    fetches come host by host: the same site, the same due time object, one after the
    other)."""

    def __init__(self, make: Callable[[Any], str]) -> None:
        self._make = make
        self._value: object = _Texts
        self._text = ""

    def text(self, value: Any) -> str:
        """``make(value)``, made once for a run of the same object."""
        if value is not self._value:
            self._value, self._text = value, self._make(value)
        return self._text


def _encoded() -> Callable[[str], str]:
    """``encode_basestring`` with its texts kept (for the few reasons and verdicts)."""
    made: dict[str, str] = {}

    def encode(text: str) -> str:
        found = made.get(text)
        if found is None:
            found = made[text] = encode_basestring(text)
        return found

    return encode


def json_lines(fetches: Iterable[PlannedFetch]) -> Iterator[str]:
    """Each fetch as ``json.dumps(fetch.to_dict(), ensure_ascii=False)`` writes it."""
    due, site = _Texts(datetime.isoformat), _Texts(encode_basestring)
    sitemap, word = _Texts(encode_basestring), _encoded()
    priority, chance = _rounded(6), _rounded(4)
    for f in fetches:
        lastmod = "null" if f.lastmod is None else '"' + f.lastmod.isoformat() + '"'
        yield (
            f'{{"url": {encode_basestring(f.url)}, "site": {site.text(f.site)}, '
            f'"sitemap": {sitemap.text(f.sitemap)}, "due_at": "{due.text(f.due_at)}", '
            f'"reason": {word(f.reason)}, "priority": {priority(f.priority)}, '
            f'"p_changed": {chance(f.p_changed)}, "lastmod": {lastmod}, '
            f'"verdict": {word(f.verdict)}}}'
        )


def csv_rows(fetches: Iterable[PlannedFetch]) -> Iterator[list[str | float]]:
    """Each fetch as the CSV row of its :meth:`to_dict` values (None as '')."""
    due = _Texts(datetime.isoformat)
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

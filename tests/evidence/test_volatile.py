"""Volatile tokens removed by windows (:func:`auditor.evidence.text.without_volatile`): the
same text as the pattern run over the whole of it, for any text, case kept or folded; and
the pattern run only around the digits, not over a page's prose.

Touches: nothing.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.evidence.text import (
    _VOLATILE_CASED,
    VOLATILE,
    normalise,
    normalise_blocks,
    without_volatile,
)

#: Pieces the patterns are made of, and their near misses: digits (one Arabic-Indic),
#: hex and base64 letters, separators, every kind of space, the units and "ago".
PIECES = [
    *"0123456789", "\u0663", "٣٣", *"abcdefxyzAFKT", "+", "/", "=", "-", ":", ".", ",",
    " ", "  ", "\t", "\n", "\u00a0", "\u2003", "\x00", "é", "ſ", "\u212a", "_",
    "t", "z", "am", "p.m.", "PM", "seconds", "sec", "mins", "Minutes", "hours", "hr",
    "hrs", "HOURS", "ſecs", "ago", "Ago", "deadbeefdeadbeef", "0123456789abcdef",
    "2026-12-04", "2026-12-04t10:20:30.5+01:00", "10:20", "4:05:06", "aGVsbG8gd29ybGQgaGVsbG8x",
]  # fmt: skip
_texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=3000, deadline=None)
@given(_texts)
def test_windows_remove_what_the_whole_text_pattern_removes(text: str) -> None:
    assert without_volatile(text, VOLATILE) == VOLATILE.sub(" ", text)
    assert without_volatile(text, _VOLATILE_CASED) == _VOLATILE_CASED.sub(" ", text)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_windows_match_the_pattern_on_any_text(text: str) -> None:
    for pattern in (VOLATILE, _VOLATILE_CASED):
        assert without_volatile(text, pattern) == pattern.sub(" ", text)


def test_normalised_texts_are_unchanged() -> None:
    raw = "Updated 2026-12-04 10:20 UTC, 5 minutes ago: 12 comments, id deadbeef00deadbeef"
    text = " ".join(VOLATILE.sub(" ", raw.casefold()).split())
    assert normalise(raw) == text == "updated utc, : 12 comments, id"
    texts, cased = normalise_blocks([raw, "No digits Here"])
    assert texts[0] == "updated   utc,  :  , id  " and cased[0] == "Updated   UTC,  :  , id  "
    assert texts[1] == "no digits here" and cased[1] == "No digits Here"


class _Spy:
    """A pattern that records the length of every text it is run over."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.lengths: list[int] = []

    def sub(self, replacement: str, text: str) -> str:
        self.lengths.append(len(text))
        return self.pattern.sub(replacement, text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pattern, name)


def test_the_pattern_runs_around_the_digits_only() -> None:
    """Prose holds a few numbers; the pattern, tried at every character, costs 0.1 us a
    character, most of a small page's normalisation."""
    prose = "the quick brown fox jumps over the lazy dog " * 200
    text = f"{prose}posted 3 hours ago {prose}at 10:20 pm {prose}"
    spy = _Spy(VOLATILE)
    assert without_volatile(text, spy) == VOLATILE.sub(" ", text)  # type: ignore[arg-type]
    assert 0 < sum(spy.lengths) < 40

"""Counts written as plain English in the messages and reports: ``1 site``, ``2 sites``.

Touches: nothing.
"""

from __future__ import annotations

__all__ = ["counted", "noun"]


def noun(number: int, singular: str, plural: str | None = None) -> str:
    """The noun for ``number`` of them: singular for one, else ``plural`` (default: +s)."""
    return singular if number == 1 else plural or singular + "s"


def counted(number: int, singular: str, plural: str | None = None) -> str:
    """``1 fetch``, ``1,200 fetches``: the number and its noun, singular for one."""
    return f"{number:,} {noun(number, singular, plural)}"

"""Pipeline values to table rows and back: sitemap files, segments, page observations.

Touches: nothing.
"""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import datetime
from typing import Any

from auditor.history.records import instant, instant_text
from auditor.models import FileContent, SitemapFile
from auditor.scorer.result import PageObservation, SegmentVerdict

__all__ = [
    "EXPORT_PAGE_COLUMNS",
    "FILE_COLUMNS",
    "PAGE_COLUMNS",
    "SEGMENT_COLUMNS",
    "file_dict",
    "file_row",
    "page_of",
    "page_row",
    "segment_row",
    "signed64",
    "to_json",
    "unsigned64",
]

FILE_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(SitemapFile))
PAGE_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(PageObservation))
#: The pages export leaves out the blocks (binary, for the next comparison only).
EXPORT_PAGE_COLUMNS: tuple[str, ...] = tuple(c for c in PAGE_COLUMNS if c != "fp_blocks")
SEGMENT_COLUMNS: tuple[str, ...] = (
    "sitemap",
    "urls",
    "verdict",
    "reasons",
    "agree",
    "disagree",
    "compared",
    "changed",
    "lastmod_advanced",
    "change_rate",
    "recheck_days",
    "precision",
    "recall",
    "group_pattern",
)
_FILE_INSTANTS = frozenset({"fetched_at", "index_lastmod"})
_FILE_FLAGS = frozenset({"via_robots", "gzipped", "readable", "reused"})
_PAGE_INSTANTS = frozenset(
    {
        "fetched_at",
        "lastmod",
        "date_modified",
        "date_published",
        "http_last_modified",
        "newest_child",
    }
)
_PAGE_FLAGS = frozenset(
    {
        "date_modified_credible",
        "truncated",
        "content_changed",
        "template_changed",
        "own_frame_changed",
    }
)
_TWO_64 = 1 << 64
_TWO_63 = 1 << 63


def signed64(value: int | None) -> int | None:
    """An unsigned 64-bit value as the signed one SQLite can hold (two's complement)."""
    if value is None:
        return None
    if not 0 <= value < _TWO_64:
        raise ValueError(f"not an unsigned 64-bit value: {value}")
    return value - _TWO_64 if value >= _TWO_63 else value


def unsigned64(value: int | None) -> int | None:
    """The inverse of :func:`signed64`."""
    return None if value is None else value + _TWO_64 if value < 0 else value


def to_json(value: Any) -> str:
    """Compact JSON; numpy scalars and datetimes (as ISO 8601) allowed."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays
        return value.tolist()
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    raise TypeError(f"history cannot store {type(value).__name__} as JSON")


def file_row(file: SitemapFile) -> tuple[Any, ...]:
    """The ``sitemap_files`` values of one file, in :data:`FILE_COLUMNS` order."""
    return tuple(
        _content_json(file.content)
        if name == "content"
        else _stored(name, getattr(file, name), _FILE_INSTANTS, _FILE_FLAGS)
        for name in FILE_COLUMNS
    )


def file_dict(row: tuple[Any, ...]) -> dict[str, Any]:
    """A stored file as a dict: ``SitemapFile(**file_dict(row))`` rebuilds it."""
    values = {
        name: _loaded(name, value, _FILE_INSTANTS, _FILE_FLAGS)
        for name, value in zip(FILE_COLUMNS, row, strict=True)
    }
    values["reused"] = bool(values["reused"])  # None in rows saved before it existed
    values["content"] = _content_of(values["content"])
    return values


def _content_json(content: FileContent | None) -> str | None:
    if content is None:
        return None
    return to_json(
        {
            "problems": [list(pair) for pair in content.problems],
            "children": [list(pair) for pair in content.children],
            "without_loc": content.without_loc,
            "duplicates": content.duplicates,
            "repeated": list(content.repeated),
        }
    )


def _content_of(text: str | None) -> FileContent | None:
    if text is None:
        return None
    data = json.loads(text)
    return FileContent(
        problems=tuple((str(code), str(detail)) for code, detail in data["problems"]),
        children=tuple((str(loc), raw) for loc, raw in data["children"]),
        without_loc=int(data["without_loc"]),
        duplicates=int(data["duplicates"]),
        repeated=tuple(
            str(loc) for loc in data.get("repeated", ())
        ),  # absent in files saved before coverage
    )


def segment_row(segment: SegmentVerdict) -> tuple[Any, ...]:
    """The ``segments`` values of one segment verdict, in :data:`SEGMENT_COLUMNS` order."""
    reasons = to_json([reason.to_dict() for reason in segment.reasons])
    return tuple(
        reasons if name == "reasons" else getattr(segment, name) for name in SEGMENT_COLUMNS
    )


def page_row(page: PageObservation) -> tuple[Any, ...]:
    """The ``pages`` values of one observation, in :data:`PAGE_COLUMNS` order."""
    values = []
    for name in PAGE_COLUMNS:
        value = getattr(page, name)
        if name == "fp_simhash":
            value = signed64(value)
        elif name == "extra":
            value = to_json(value)
        values.append(_stored(name, value, _PAGE_INSTANTS, _PAGE_FLAGS))
    return tuple(values)


def page_of(row: tuple[Any, ...]) -> PageObservation:
    """The observation of a stored ``pages`` row (:data:`PAGE_COLUMNS` order)."""
    values = {}
    for name, value in zip(PAGE_COLUMNS, row, strict=True):
        if name == "fp_simhash":
            value = unsigned64(value)
        elif name == "extra":
            value = json.loads(value)
        values[name] = _loaded(name, value, _PAGE_INSTANTS, _PAGE_FLAGS)
    return PageObservation(**values)


def _stored(name: str, value: Any, instants: frozenset[str], flags: frozenset[str]) -> Any:
    if value is None:
        return None
    if name in instants:
        return instant_text(value)
    if name in flags:
        return int(bool(value))
    return value


def _loaded(name: str, value: Any, instants: frozenset[str], flags: frozenset[str]) -> Any:
    if value is None:
        return None
    if name in instants:
        return instant(value)
    if name in flags:
        return bool(value)
    return value

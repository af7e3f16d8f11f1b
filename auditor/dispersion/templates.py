"""URL templates: each URL's first path segment under a file's base, and its template code
(:mod:`auditor.dispersion.groups` decides the groups from them).

Two readings, one result. A file of many URLs is read in pyarrow's compute kernels (RE2
in C++, one pass a pattern, no Python object per URL); a file of at most
:data:`FEW_URLS` URLs (every small site's) in Python's ``re``, URL by URL: a kernel call
costs about 20 us whatever its input and gives up the interpreter's lock while it runs, so
the fifteen of them cost a small site about 1 ms in one process and 2.5 ms in a fleet's
worker, where 128 threads take the lock back each time (context switches). The Python
patterns say what the RE2 ones say: ``\\d`` is ASCII there (``[0-9]`` here), ``$`` is the
end of the text (``\\Z`` here; Python's ``$`` also matches before a final line break);
minimum and maximum compare UTF-8 bytes there, code points here (the same order).
``tests/dispersion/test_templates.py`` reads random and hostile URLs both ways.

Touches: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

__all__ = [
    "DATE",
    "FEW_URLS",
    "HOME",
    "PAGE",
    "REST",
    "STRUCTURAL",
    "Segments",
    "UrlList",
    "segment_names",
    "segment_positions",
]

HOME = "\x00home"
PAGE = "\x00page"
DATE = "\x00date"
REST = "\x00rest"
#: Code ``i < 4`` of a template is ``STRUCTURAL[i]``; code ``4 + i`` is first segment ``i``.
STRUCTURAL = (REST, HOME, PAGE, DATE)
#: A file of at most this many URLs is read in Python (module docstring).
FEW_URLS = 1_000
_ORIGIN = r"^(?:[A-Za-z][A-Za-z0-9+.-]*:)?(?://[^/?#]*)?"
#: The scheme and host of an absolute URL. Not _ORIGIN: its optional parts make RE2 3x slower.
_ABSOLUTE = r"^[^:/?#]+://[^/?#]*"
_PAGINATION = r"/page/\d+/?(?:[?#]|$)"
_YEAR = r"^(?:19|20)\d\d$"
_HOME_NAMES = frozenset({"", "index.html", "index.htm", "index.php"})
#: The same, for Python's ``re`` (module docstring).
_PAGINATION_PY = re.compile(r"/page/[0-9]+/?(?:[?#]|\Z)")
_YEAR_PY = re.compile(r"(?:19|20)[0-9][0-9]")

#: The distinct first segments, in the order first met: a list when read in Python.
Segments: TypeAlias = "list[str] | pa.Array"


class UrlList:
    """A file's locs (texts; None or NaN missing), read in Python when few and all texts,
    else in pyarrow (module docstring)."""

    def __init__(self, locs: Sequence[str] | np.ndarray | pa.Array | pa.ChunkedArray) -> None:
        self.few = _as_texts(locs)
        self.arrow: pa.Array = _as_arrow(locs) if self.few is None else None

    def common_base(self) -> str:
        """The longest directory (``/a/b/``) that starts every URL's path, after one shared
        origin; ``/`` when the origins differ. The smallest and largest texts bound it."""
        if self.few is not None:
            low, high = min(self.few, default=None), max(self.few, default=None)
        else:
            bounds = pc.min_max(self.arrow)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if low is None or high is None:
            return "/"
        low, high = str(low), str(high)
        differ = (i for i, (a, b) in enumerate(zip(low, high, strict=False)) if a != b)
        shared = low[: next(differ, min(len(low), len(high)))]
        origin = re.match(_ORIGIN, low)
        start = origin.end() if origin else 0
        if len(shared) <= start or shared[start] != "/":
            return "/"
        return shared[start : shared.rindex("/") + 1]

    def template_codes(self, base: str) -> tuple[np.ndarray, Segments]:
        """Each URL's template code (:data:`STRUCTURAL`) and the distinct first segments."""
        if self.few is not None:
            return _few_codes(self.few, base)
        return _arrow_codes(self.arrow, base)

    def count_dated(self, rows: np.ndarray, base: str, parts: int) -> int:
        """How many of the URLs at ``rows`` have a year right under ``base``, then
        ``parts`` two-digit parts (``/2020/05/03/`` has 2)."""
        if not len(rows):
            return 0
        if self.few is not None:
            found = re.compile(_ORIGIN + re.escape(base) + "[0-9]{4}/" + "[0-9][0-9]/" * parts)
            return sum(1 for row in rows.tolist() if found.match(self.few[row]))
        pattern = _ORIGIN + re.escape(base) + r"\d{4}/" + r"\d\d/" * parts
        matched = pc.match_substring_regex(self.arrow.take(pa.array(rows)), pattern)
        return int(pc.sum(matched).as_py() or 0)


def segment_names(segments: Segments, indices: np.ndarray) -> list[str]:
    """The first segments at ``indices``."""
    if isinstance(segments, list):
        return [segments[i] for i in indices.tolist()]
    return [str(name) for name in segments.take(pa.array(indices)).to_pylist()]


def segment_positions(segments: Segments, known: list[str]) -> np.ndarray:
    """Each first segment's position in ``known`` (-1 when not in it)."""
    if isinstance(segments, list):
        position = {name: i for i, name in enumerate(known)}
        return np.array([position.get(name, -1) for name in segments], dtype=np.int64)
    value_set = pa.array(known, type=segments.type)
    found = pc.index_in(segments, value_set=value_set).fill_null(-1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)


def _as_texts(locs: Sequence[str] | np.ndarray | pa.Array | pa.ChunkedArray) -> list[str] | None:
    """``locs`` as a list of texts when there are few and every one is a text."""
    if len(locs) > FEW_URLS:
        return None
    if isinstance(locs, pa.Array | pa.ChunkedArray):
        texts = locs.to_pylist()
    elif isinstance(locs, np.ndarray):
        texts = locs.tolist()
    else:
        texts = list(locs)
    return texts if all(type(text) is str for text in texts) else None


def _as_arrow(locs: Sequence[str] | np.ndarray | pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(locs, pa.ChunkedArray):
        locs = locs.combine_chunks()
    if isinstance(locs, pa.Array):
        return locs.cast(pa.large_string())
    if isinstance(locs, np.ndarray):
        locs = locs.astype(object)
    return pa.array(locs, type=pa.large_string(), from_pandas=True)


def _entries(segments: Sequence[str], is_home: np.ndarray, is_year: np.ndarray) -> np.ndarray:
    """The template code of each first segment, and last of a URL without one (REST)."""
    entry = np.arange(len(STRUCTURAL), len(STRUCTURAL) + len(segments) + 1)
    entry[-1] = STRUCTURAL.index(REST)
    entry[:-1][is_home] = STRUCTURAL.index(HOME)
    entry[:-1][is_year] = STRUCTURAL.index(DATE)
    return entry


def _few_codes(locs: list[str], base: str) -> tuple[np.ndarray, list[str]]:
    path = _segment_under(base)
    absolute, relative = re.compile(_ABSOLUTE + path), re.compile("^" + path)
    order: dict[str, int] = {}
    index = np.empty(len(locs), dtype=np.int64)
    for row, loc in enumerate(locs):
        found = absolute.match(loc) or relative.match(loc)
        index[row] = -1 if found is None else order.setdefault(found["seg"], len(order))
    segments = list(order)
    is_home = np.array([name in _HOME_NAMES for name in segments], dtype=bool)
    is_year = np.array([_YEAR_PY.fullmatch(name) is not None for name in segments], dtype=bool)
    codes = _entries(segments, is_home, is_year)[index]
    paged = [row for row, loc in enumerate(locs) if _PAGINATION_PY.search(loc)]
    codes[paged] = STRUCTURAL.index(PAGE)
    return codes, segments


def _arrow_codes(arrow: pa.Array, base: str) -> tuple[np.ndarray, pa.Array]:
    segments = _first_segments(arrow, base)
    dictionary = segments.dictionary
    homes = pa.array(sorted(_HOME_NAMES), type=dictionary.type)
    is_home = _mask(pc.is_in(dictionary, value_set=homes))
    entry = _entries(dictionary, is_home, _mask(pc.match_substring_regex(dictionary, _YEAR)))
    index = segments.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    codes = entry[index]
    codes[_mask(pc.match_substring_regex(arrow, _PAGINATION))] = STRUCTURAL.index(PAGE)
    return codes, dictionary


def _first_segments(arrow: pa.Array, base: str) -> pa.DictionaryArray:
    """Each URL's first path segment under the base, null when not under it. Absolute
    URLs take one regex pass; the rare relative ones a second pass of their own."""
    path = _segment_under(base)
    found = pc.extract_regex(arrow, _ABSOLUTE + path)
    segment = pc.if_else(pc.is_valid(found), pc.struct_field(found, [0]), None)
    missing = pc.is_null(segment)
    if pc.any(missing).as_py():
        again = pc.extract_regex(arrow.filter(missing), "^" + path)
        again = pc.if_else(pc.is_valid(again), pc.struct_field(again, [0]), None)
        segment = pc.replace_with_mask(segment, missing, again)
    return pc.dictionary_encode(segment)


def _segment_under(base: str) -> str:
    """The pattern of a path's first segment under ``base`` (group ``seg``): one text for
    both readings (it holds nothing RE2 and ``re`` read differently)."""
    return re.escape(base) + r"(?P<seg>[^/?#]*)"


def _mask(flags: pa.Array) -> np.ndarray:
    return np.asarray(flags.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)

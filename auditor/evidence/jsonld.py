"""JSON-LD blocks read one by one, so a broken block never hides a good one.

extruct's JSON-LD extractor stops at the first block it cannot decode and the
page's other blocks are lost with it; real pages often carry one broken block
(a CMS plug-in) beside a good one. Each ``<script type="application/ld+json">``
is decoded here on its own: strict JSON first, then once more after removing
what sites commonly leave around it (HTML comments, ``CDATA`` markers, ``//``
comment lines, trailing commas).

Touches: nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from lxml import etree

from auditor.evidence.text import elements

__all__ = ["MAX_SCRIPT_CHARS", "read_jsonld"]

#: A block longer than this is skipped (a whole product catalogue, an embedded data dump).
MAX_SCRIPT_CHARS = 2_000_000
_LD_JSON = "application/ld+json"
_SCRIPTS = etree.XPath("descendant-or-self::script[@type]")  # from the root (elements)
_WRAPPERS = ("<!--", "-->", "<![CDATA[", "]]>", "//<![CDATA[", "//]]>")
_COMMENT_LINE = re.compile(r"^\s*<!--[^{}\[\]]*-->\s*$", re.MULTILINE)
# A JSON string (kept) or a JavaScript comment (dropped): strings first, so "http://x" survives.
_JS_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_BROKEN = object()


def read_jsonld(tree: etree._Element) -> tuple[list[Any], int]:
    """Every decoded JSON-LD block of the page (``null`` blocks left out), and how many
    blocks could not be decoded."""
    blocks: list[Any] = []
    broken = 0
    for text in _scripts(tree):
        data = _decode(text)
        if data is _BROKEN:
            broken += 1
        elif data is not None:
            blocks.append(data)
    return blocks, broken


def _scripts(tree: etree._Element) -> Iterator[str]:
    for script in elements(_SCRIPTS, tree):
        kind = script.get("type", "").split(";", 1)[0].strip().lower()
        if kind != _LD_JSON:
            continue
        text = script.text or ""
        if text.strip() and len(text) <= MAX_SCRIPT_CHARS:
            yield text


def _decode(text: str) -> Any:
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):
        pass
    try:
        return json.loads(_cleaned(text), strict=False)
    except (ValueError, RecursionError):
        return _BROKEN


def _cleaned(text: str) -> str:
    """``text`` without HTML comment lines, wrapping markers, JavaScript comments and
    trailing commas."""
    text = _COMMENT_LINE.sub("", text).strip()
    for marker in _WRAPPERS:
        text = text.removeprefix(marker).removesuffix(marker).strip()
    text = _JS_COMMENT.sub(lambda m: m.group(1) or "", text)
    return _TRAILING_COMMA.sub(r"\1", text).strip().rstrip(";")

"""What a file is, judged from its first bytes, and the expat parser for its encoding.

The head is read past leading whitespace and a UTF-8 BOM, at least
:data:`PROBE_SIZE` bytes of it, so the judgement (HTML page, XML, plain text,
declared encoding) is the same however the bytes arrived.

Touches: nothing.
"""

from __future__ import annotations

import codecs
import pyexpat
import re
from collections.abc import Iterator

from auditor.walker.records import SEP

__all__ = ["HTML_START", "PROBE_SIZE", "UTF16_BOMS", "is_utf8", "make_parser", "read_head"]

_WHITESPACE = b" \t\r\n"
#: Bytes read ahead before judging a file: room for a BOM, an XML declaration, an HTML start.
PROBE_SIZE = 1024
_UTF8_BOM = codecs.BOM_UTF8
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_EXPAT_NATIVE = frozenset({"utf-8", "utf-16", "utf-16-le", "utf-16-be", "ascii", "latin-1"})
# Python codec -> the name expat knows, for declarations spelt otherwise ("utf8", "latin1").
_EXPAT_NAMES = {"utf-8": "utf-8", "ascii": "us-ascii", "latin-1": "iso-8859-1"}
_EXPAT_SPELLINGS = frozenset({"utf-8", "us-ascii", "iso-8859-1", "utf-16", "utf-16le", "utf-16be"})
#: An HTML page: optional comments, then an HTML doctype (any case) or an <html> element.
#: A doctype with an internal subset ("[") is not HTML's: it goes to expat, which refuses it.
HTML_START = re.compile(
    rb"(?:<!--.*?-->\s*)*<(?:!doctype\s+html(?:\s[^\[>]*)?>|html[\s>])", re.I | re.S
)

# Bytes invalid in a transcoded encoding become U+FFFE, a character XML forbids:
# expat then stops exactly there, and what came before is kept.
_INVALID_BYTES = "auditor-invalid-bytes"


def _mark_invalid_bytes(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "\ufffe", exc.end


codecs.register_error(_INVALID_BYTES, _mark_invalid_bytes)


def read_head(stream: Iterator[bytes]) -> bytes:
    """The file's first bytes, past leading whitespace and a UTF-8 BOM.

    At least ``PROBE_SIZE`` bytes unless the file is shorter, so that what is
    judged from the head (BOM, XML declaration, HTML) is the same however the
    bytes arrived: a network read, a gzip step or a dripping server may hand
    out the first bytes one at a time.
    """
    head = b""
    judged_bom = False
    for chunk in stream:
        head = (head + chunk).lstrip(_WHITESPACE)
        if not judged_bom and len(head) >= len(_UTF8_BOM):
            judged_bom = True
            if head.startswith(_UTF8_BOM):
                head = head[len(_UTF8_BOM) :].lstrip(_WHITESPACE)
        if judged_bom and len(head) >= PROBE_SIZE:
            break
    return head


def make_parser(head: bytes) -> tuple[pyexpat.XMLParserType, codecs.IncrementalDecoder | None]:
    """An expat parser for this document, transcoding multi-byte legacy encodings to UTF-8."""
    declared = _DECLARED_ENCODING.match(head)
    transcoder = None
    forced = None
    if declared and not head.startswith(UTF16_BOMS):
        name = declared.group(1).decode("ascii")
        codec = _codec_name(name)
        if codec in _EXPAT_NAMES and name.lower() not in _EXPAT_SPELLINGS:
            forced = _EXPAT_NAMES[codec]  # an alias expat does not know, e.g. "utf8"
        elif codec is not None and codec not in _EXPAT_NATIVE and not _single_byte(codec):
            transcoder = codecs.getincrementaldecoder(codec)(errors=_INVALID_BYTES)
            forced = "utf-8"
    parser = pyexpat.ParserCreate(encoding=forced, namespace_separator=SEP)
    parser.buffer_text = True
    parser.buffer_size = 65_536
    parser.ordered_attributes = False
    parser.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)
    return parser, transcoder


def is_utf8(head: bytes) -> bool:
    """True when ``head`` shows a UTF-8 document: declared so, or declaring nothing."""
    if head.startswith(UTF16_BOMS):
        return False
    if b"<?xml".startswith(head[:5]) and (not head.startswith(b"<?xml") or b"?>" not in head):
        return False  # a declaration not seen whole yet
    declared = _DECLARED_ENCODING.match(head)
    return declared is None or _codec_name(declared.group(1).decode("ascii")) == "utf-8"


def _codec_name(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _single_byte(codec: str) -> bool:
    try:
        return len(bytes(range(256)).decode(codec, errors="replace")) == 256
    except (LookupError, ValueError):
        return False

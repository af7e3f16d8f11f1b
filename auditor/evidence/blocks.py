"""Text blocks of a page and their compact form: what history keeps to tell which parts moved.

A block is a run of text between block-level tags (jusText's segmentation: ``p``,
``div``, ``li``, ``h1``..., and ``br``), normalised as the fingerprint's text is. Each
keeps no text, only:

- ``hash``: 32 bits of BLAKE2b of its normalised text (its identity across pages and runs);
- ``bag``: the sum of its words' CRC-32s modulo 2**32, a hash of its *multiset of words*
  that adds up over blocks, so a page re-cut into other blocks (a new theme) with the
  same words sums to the same value;
- ``marks``: on code blocks, the same sum over its punctuation and symbols, one character
  a token (in code they are syntax: ``['a', b]`` → ``('a', b)`` is an edit; in prose a
  theme's pilcrows and quote styles are markup, so prose keeps none);
- ``case``: what its words' case adds to ``bag``: the sum of the CRC-32s of its words as
  written less ``bag``, in 16 bits (0 when casefold changes none of its words). "Thesis
  title" → "Thesis Title" leaves ``hash`` and ``bag`` as they were and moves ``case``;
  it adds up over blocks as ``bag`` does. 16 bits: a change of case goes unseen once in
  65,536, for 2 bytes a block instead of 4 (most blocks of prose hold a capital);
- ``tokens``: its word count; ``path``: 16 bits of its block-level tag path (for the
  template's slots); ``region``: where on the page it sits (:data:`REGIONS`); ``tag``:
  what it is (:data:`TAGS`); ``flags``: in the content root, boilerplate, link-dense;
- ``numbers``: on content blocks and on lists of links in the root, up to
  :data:`MAX_NUMBERS` numbers, each with the word before and after it (``("price",
  "19.90", "")``, ``("", "12,400", "residents")``), so a summary can say ``price 19.90 →
  24.90`` or ``12,400 → 12,450 residents``, and a list entry edited in place be told
  (``foo-5.1.0.tar.gz`` → ``foo-5.3.0.tar.gz``).

:func:`encode_blocks` packs them (about 16 bytes a block) with a version byte:
blocks of another :data:`BLOCKS_VERSION` are never compared, so an upgrade of the
segmentation cannot read as change. ``hash`` and ``bag`` are the same in every version
read. Version 1 (before ``marks``) is still read, its code blocks without marks: a
comparison with them weighs words only, as version 1 did. Version 2 (before ``case``)
is read with ``case`` unknown (None): a comparison with it ignores case, as version 2
did. Version 3 stores ``case`` only where it is not 0 (code and lists of lower-case
words have none), 2 bytes then.

Touches: nothing.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "BLOCKS_VERSION",
    "BOILERPLATE",
    "IN_ROOT",
    "LINK_DENSE",
    "MAX_NUMBERS",
    "READABLE_VERSIONS",
    "REGIONS",
    "TAGS",
    "Block",
    "block_count",
    "blocks_version",
    "decode_blocks",
    "encode_blocks",
    "word_hash",
]

#: Bumped whenever segmentation, normalisation or hashing changes what a block is.
BLOCKS_VERSION = 3  # 2: code blocks' marks; 3: words' case, numbers of lists of links
#: Versions still read (their blocks are compared as they were).
READABLE_VERSIONS = frozenset({1, 2, BLOCKS_VERSION})
#: Numbers (with the word before each) kept per content block.
MAX_NUMBERS = 6
#: Where a block sits, by its nearest landmark (tag, ARIA role, class or id words).
REGIONS = (
    "page body",
    "article body",
    "header",
    "footer",
    "navigation",
    "sidebar",
    "notice",
    "ads",
    "comments",
    "related links",
    "share bar",
    "form",
    "hidden text",
)
#: What a block is, by its block-level tag.
TAGS = ("block", "paragraph", "heading", "list item", "table cell", "code block", "quote")
#: ``flags`` bits.
IN_ROOT = 1  # inside the page's content root (main, the longest article, else body)
BOILERPLATE = 2  # inside a page-frame subtree (nav, aside, footer, cookie notice...)
LINK_DENSE = 4  # mostly link text (a menu, a "read next" list, previous/next links)

_HEADER = struct.Struct("<BI")  # version, block count
_BLOCK = struct.Struct("<IIHHBBBB")  # hash, bag, tokens, path, region, tag, flags, numbers
_MARKS = struct.Struct("<I")  # follows the block when its numbers byte has _HAS_MARKS
_HAS_MARKS = 0x80
_CASE = struct.Struct("<H")  # follows the block (and its marks) when it has _HAS_CASE
_HAS_CASE = 0x40
_MASK16 = 0xFFFF
_COUNT = 0x3F  # the numbers byte's count of numbers (at most MAX_NUMBERS)
_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class Block:
    """One text block of a page, as history keeps it (module docstring)."""

    hash: int
    bag: int
    tokens: int
    path: int
    region: int
    tag: int
    flags: int
    numbers: tuple[tuple[str, str, str], ...] = ()  # (word before, number, word after)
    marks: int | None = None  # code blocks: the sum of their punctuation's hashes
    case: int | None = None  # what its words' case adds to bag, 16 bits (None: unknown)

    @property
    def in_root(self) -> bool:
        """Inside the page's content root."""
        return bool(self.flags & IN_ROOT)

    @property
    def content(self) -> bool:
        """Main-content text: in the root, not page frame, not a list of links."""
        return self.flags & (IN_ROOT | BOILERPLATE | LINK_DENSE) == IN_ROOT

    @property
    def links(self) -> bool:
        """A list of links inside the content root (a listing page's content)."""
        return self.flags & (IN_ROOT | BOILERPLATE | LINK_DENSE) == IN_ROOT | LINK_DENSE

    @property
    def region_name(self) -> str:
        """The region in words."""
        return REGIONS[self.region] if self.region < len(REGIONS) else "page body"

    @property
    def tag_name(self) -> str:
        """What the block is, in words."""
        return TAGS[self.tag] if self.tag < len(TAGS) else "block"


def word_hash(word: str) -> int:
    """The 32-bit hash of one word in a block's ``bag``."""
    return zlib.crc32(word.encode("utf-8"))


def encode_blocks(blocks: Sequence[Block], version: int = BLOCKS_VERSION) -> bytes:
    """The compact bytes of a page's blocks (module docstring)."""
    parts = [_HEADER.pack(version, len(blocks))]
    for b in blocks:
        numbers = b.numbers[:MAX_NUMBERS]
        marked = b.marks is not None and version >= 2
        cased = bool(b.case) and version >= 3
        count = len(numbers) | (_HAS_MARKS if marked else 0) | (_HAS_CASE if cased else 0)
        parts.append(
            _BLOCK.pack(
                b.hash & _MASK32, b.bag & _MASK32, min(b.tokens, 0xFFFF), b.path & 0xFFFF,
                b.region, b.tag, b.flags, count,
            )
        )  # fmt: skip
        if marked:
            parts.append(_MARKS.pack((b.marks or 0) & _MASK32))
        if cased:
            parts.append(_CASE.pack((b.case or 0) & _MASK16))
        for before, number, after in numbers:
            parts.append(_short(before) + _short(number) + _short(after))
    return b"".join(parts)


def _short(text: str) -> bytes:
    data = text.encode("utf-8")[:255].decode("utf-8", "ignore").encode("utf-8")
    return bytes([len(data)]) + data


def blocks_version(data: bytes | None) -> int | None:
    """The version byte of encoded blocks, or None when there are none."""
    return data[0] if data else None


def block_count(data: bytes | None) -> int:
    """How many blocks encoded bytes hold (0 for none)."""
    if not data or len(data) < _HEADER.size:
        return 0
    return int(_HEADER.unpack_from(data)[1])


def decode_blocks(data: bytes | None) -> tuple[Block, ...]:
    """The blocks of :func:`encode_blocks` bytes; empty for None, another version, or bytes
    cut short (a damaged row reads as no blocks, never as an error)."""
    if not data or len(data) < _HEADER.size or data[0] not in READABLE_VERSIONS:
        return ()
    try:
        return tuple(_decode(data))
    except (struct.error, IndexError, UnicodeDecodeError):
        return ()


def _decode(data: bytes) -> Iterable[Block]:
    version, count = _HEADER.unpack_from(data)
    offset = _HEADER.size
    for _ in range(count):
        hash_, bag, tokens, path, region, tag, flags, n = _BLOCK.unpack_from(data, offset)
        offset += _BLOCK.size
        marks = None
        if n & _HAS_MARKS:
            (marks,) = _MARKS.unpack_from(data, offset)
            offset += _MARKS.size
        case = 0 if version >= 3 else None  # before version 3: unknown
        if n & _HAS_CASE:
            (case,) = _CASE.unpack_from(data, offset)
            offset += _CASE.size
        numbers = []
        for _ in range(n & _COUNT):
            before, offset = _read_short(data, offset)
            number, offset = _read_short(data, offset)
            after, offset = _read_short(data, offset)
            numbers.append((before, number, after))
        yield Block(hash_, bag, tokens, path, region, tag, flags, tuple(numbers), marks, case)


def _read_short(data: bytes, offset: int) -> tuple[str, int]:
    size = data[offset]
    end = offset + 1 + size
    if end > len(data):
        raise IndexError("cut short")
    return data[offset + 1 : end].decode("utf-8"), end

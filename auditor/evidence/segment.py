"""Cutting a page into text blocks, each with where it sits (the page's half of template
detection; the site's half is :mod:`auditor.evidence.template`).

Segmentation follows jusText: a block is the text between block-level tags (and
``br``), so a block is a paragraph, a heading, a list item, a table cell, a menu
entry. Where the fingerprint (:mod:`auditor.evidence.fingerprint`) *skips* the page
frame, this walk keeps every block of the body and marks each:

- in the content root or not (the fingerprint's root: ``<main>``, the longest
  ``<article>``, else ``<body>``);
- boilerplate: inside a subtree the fingerprint would skip (nav, aside, form, header or
  footer outside an article, hidden, ads, cookie notices, share bars, related boxes,
  comments), plus a few frame names it does not know (sidebar, widget, pagination,
  breadcrumb, table of contents, a series box) and any block holding a ``rel=prev|next``
  link (previous/next links); an element holding more than half of the root's text is
  never boilerplate, as in the fingerprint, nor is an ancestor of the content root (a
  Docusaurus ``<body class="navigation-with-keyboard">`` holds the whole page);
- link-dense: three quarters or more of its characters are link text (a menu, a "read
  next" list): jusText's and readability's sign of navigation.

Text is normalised as the fingerprint's (NFKC, case-folded, volatile tokens removed),
and counters that move without an edit are removed too: "12 comments", "1,234 views",
"3 days ago", "5 min read" (:func:`~auditor.evidence.text.normalise_blocks`). A block
whose text casefold changes is also read with its case kept, the same tokens removed,
for its ``case``; a block casefold leaves as it is has a ``case`` of 0.

Touches: nothing.
"""

from __future__ import annotations

import hashlib
import re
import zlib

from lxml import etree

from auditor.evidence.blocks import (
    BOILERPLATE,
    IN_ROOT,
    LINK_DENSE,
    MAX_NUMBERS,
    REGIONS,
    TAGS,
    Block,
)
from auditor.evidence.text import (
    MAX_BOILERPLATE_SHARE,
    NEVER_CONTENT,
    WORD,
    Lengths,
    normalise_blocks,
)

__all__ = ["BLOCK_TAGS", "LINK_DENSITY", "MAX_BLOCKS", "cut_blocks", "cut_blocks_with_text"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


BLOCK_TAGS = _words(
    """
    address article aside blockquote body br caption center dd details dialog dir div dl
    dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr legend li
    main menu nav ol option p pre section summary table tbody td tfoot th thead tr ul
    """
)
#: Share of a block's characters in link text from which it is a list of links.
LINK_DENSITY = 0.75
#: Blocks kept per page; the text after the last one is folded into it.
MAX_BLOCKS = 2_000
#: Blocks read one by one before the rest of the page's text is read in one piece (a
#: page of half a million tiny paragraphs costs one regex pass, not half a million).
_MAX_PENDING = 2 * MAX_BLOCKS

_R = {name: code for code, name in enumerate(REGIONS)}
_T = {name: code for code, name in enumerate(TAGS)}
PAGE_BODY, ARTICLE_BODY = _R["page body"], _R["article body"]
CODE_BLOCK = _T["code block"]
_TAG_KIND = {
    "p": _T["paragraph"], "h1": _T["heading"], "h2": _T["heading"], "h3": _T["heading"],
    "h4": _T["heading"], "h5": _T["heading"], "h6": _T["heading"], "li": _T["list item"],
    "dt": _T["list item"], "dd": _T["list item"], "td": _T["table cell"],
    "th": _T["table cell"], "pre": _T["code block"], "blockquote": _T["quote"],
}  # fmt: skip
_TAG_REGION = {
    "nav": _R["navigation"], "menu": _R["navigation"], "aside": _R["sidebar"],
    "form": _R["form"], "dialog": _R["notice"],
}  # fmt: skip
_ROLE_REGION = {
    "navigation": _R["navigation"], "menu": _R["navigation"], "menubar": _R["navigation"],
    "search": _R["navigation"], "banner": _R["header"], "contentinfo": _R["footer"],
    "complementary": _R["sidebar"], "dialog": _R["notice"], "alertdialog": _R["notice"],
}  # fmt: skip
_WORD_REGION: dict[str, int] = {}
for _region, _names in (
    ("ads", "ad ads adv advert adverts advertisement advertising adslot adunit adsbygoogle"
            " gpt dfp sponsored sponsor promo"),
    ("notice", "banner cookie cookies consent gdpr cmp popup modal newsletter subscribe"),
    ("share bar", "share sharing sharebar social"),
    ("related links", "related recommended recommendations recommend outbrain taboola"
                      " trending popular mostread series"),
    ("comments", "comments comment disqus"),
    ("navigation", "breadcrumb breadcrumbs pagination pager paginator navbar nav navigation"
                   " toc prevnext paginav"),
    ("sidebar", "sidebar widget widgets"),
):  # fmt: skip
    _WORD_REGION.update(dict.fromkeys(_names.split(), _R[_region]))
#: Frame words that are content inside an article (its own header and footer).
_FRAME_WORD_REGION = {"header": _R["header"], "masthead": _R["header"], "footer": _R["footer"]}
_SPLIT = re.compile(r"[\s_\-]+")
#: Punctuation and symbols, one a token: a code block's ``marks`` (in code they are syntax).
_MARKS = re.compile(r"[^\w\s]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_BEFORE = re.compile(r"([^\W\d]+)\W{0,3}$")
_AFTER = re.compile(r"[^\w.,]{0,3}([^\W\d]+)")
_MASK32 = 0xFFFFFFFF
_MASK16 = 0xFFFF
_PAGER = 128  # a flush-time mark: the block holds a rel=prev/next link


class _Frame:
    """What an element passes on to the text inside it."""

    __slots__ = ("boilerplate", "in_article", "in_link", "in_root", "path", "region", "tag")

    def __init__(
        self, in_root: bool, boilerplate: bool, region: int, in_article: bool,
        in_link: bool, path: str, tag: int,
    ) -> None:  # fmt: skip
        self.in_root, self.boilerplate, self.region = in_root, boilerplate, region
        self.in_article, self.in_link, self.path, self.tag = in_article, in_link, path, tag


def cut_blocks(
    tree: etree._Element, root: etree._Element, lengths: Lengths | None = None
) -> list[Block]:
    """The text blocks of a page's body in document order (module docstring); ``root`` is
    the content root the fingerprint chose (``lengths`` its measures, shared)."""
    return _cut(tree, root, keep_text=False, lengths=lengths).blocks


def cut_blocks_with_text(tree: etree._Element, root: etree._Element) -> list[tuple[Block, str]]:
    """The blocks with their normalised text (for tests and for reading a page by eye)."""
    cutter = _cut(tree, root, keep_text=True)
    return list(zip(cutter.blocks, cutter.texts or [], strict=True))


def _cut(
    tree: etree._Element, root: etree._Element, *, keep_text: bool, lengths: Lengths | None = None
) -> _Cutter:
    body = tree.find("body") if tree.tag == "html" else None
    page = body if body is not None else tree
    cutter = _Cutter(root, page, keep_text, lengths or Lengths())
    cutter.walk(page)
    return cutter


class _Cutter:
    """One walk over the body, gathering text into blocks at block boundaries; the text of
    every block is normalised at the end in one pass (a regex call per block costs more
    than the walk)."""

    def __init__(
        self, root: etree._Element, page: etree._Element, keep_text: bool, lengths: Lengths
    ) -> None:
        self.root = root
        self.root_is_page = root is page
        self.holds_root = frozenset(root.iterancestors())  # never page frame
        self.keep_text = keep_text
        self.measure = lengths
        self.largest_boilerplate = MAX_BOILERPLATE_SHARE * lengths(root)
        self.pending: list[tuple[str, _Frame, int]] = []  # raw text, owner, flags
        self.blocks: list[Block] = []
        self.overflow: list[str] = []  # raw text of the blocks past _MAX_PENDING
        self.texts: list[str] | None = None

    def walk(self, page: etree._Element) -> None:
        """Cut ``page`` (the body) into blocks. (One loop with local state: it runs once per
        element and text of the page, so it is written for speed.)"""
        frame = owner = _Frame(False, False, PAGE_BODY, False, False, "", 0)
        pieces: list[str] = []
        chars = link_chars = 0
        pager = False
        pending = self.pending

        def flush(owner: _Frame) -> None:
            nonlocal pieces, chars, link_chars, pager
            if chars:
                flags = (IN_ROOT if owner.in_root else 0) | (
                    BOILERPLATE if owner.boilerplate or pager else 0
                )
                if link_chars >= LINK_DENSITY * chars:
                    flags |= LINK_DENSE
                if pager and not owner.boilerplate:
                    flags |= _PAGER
                raw = " ".join(pieces).replace("\x00", " ")
                if len(pending) < _MAX_PENDING:
                    pending.append((raw, owner, flags))
                else:  # past the cap: only its text counts, folded into the last block
                    self.overflow.append(raw)
            pieces, chars, link_chars, pager = [], 0, 0, False

        # None: nothing to restore at the element's end (its frame and owner are those
        # of its parent: an inline tag without attributes, or a skipped subtree).
        saved: list[tuple[_Frame, _Frame, bool] | None] = []
        root = self.root
        walker = etree.iterwalk(page, events=("start", "end", "comment", "pi"))
        for event, element in walker:
            if event == "start":
                tag = element.tag
                if tag in NEVER_CONTENT:
                    walker.skip_subtree()
                    saved.append(None)
                    continue
                if (
                    tag not in BLOCK_TAGS
                    and tag != "a"
                    and element is not root
                    and (not element.keys())
                ):
                    saved.append(None)  # changes nothing (_frame): its text is inline
                else:
                    own = self._frame(element, tag, frame)
                    blocky = tag in BLOCK_TAGS or own.region != frame.region
                    if blocky or own.in_root != frame.in_root:
                        blocky = True
                        flush(owner)
                    if tag == "a" and not pager:
                        rel = (element.get("rel") or "").lower().split()
                        pager = "prev" in rel or "next" in rel
                    saved.append((frame, owner, blocky))
                    frame = own
                    if blocky:
                        owner = own
                text = element.text
            elif event == "end":
                outer = saved.pop()
                if outer is not None:
                    if outer[2]:
                        flush(owner)
                    frame, owner = outer[0], outer[1]
                text = element.tail
            else:  # a comment or processing instruction: only its tail is text
                text = element.tail
            if text:
                pieces.append(text)
                size = len(text.strip())
                chars += size
                if frame.in_link:
                    link_chars += size
        flush(owner)
        self._finish()

    def _finish(self) -> None:
        """Normalise every block's text at once and hash each block."""
        texts, cased = normalise_blocks([raw for raw, _, _ in self.pending])
        kept: list[str] = []
        paths: dict[str, int] = {}
        for text, original, (_, owner, flags) in zip(texts, cased, self.pending, strict=True):
            text = " ".join(text.split())
            words = WORD.findall(text)
            if not words:
                continue
            region = _R["navigation"] if flags & _PAGER else owner.region
            flags &= ~_PAGER
            bag = _bag(words)
            path = paths.get(owner.path)
            if path is None:
                path = paths[owner.path] = zlib.crc32(owner.path.encode()) & 0xFFFF
            block = Block(
                _text_hash(text), bag, len(words), path, region, owner.tag, flags,
                _numbers(text) if flags & (IN_ROOT | BOILERPLATE) == IN_ROOT else (),
                _bag(_MARKS.findall(text)) if owner.tag == CODE_BLOCK else None,
                0 if original is None else _case(original, words, bag),
            )  # fmt: skip
            self.blocks.append(block)
            kept.append(text)
        rest, rest_cased = (
            normalise_blocks(["\n".join(self.overflow)]) if self.overflow else ([], [])
        )
        text = " ".join(rest[0].split()) if rest else ""
        if self.blocks and (len(self.blocks) > MAX_BLOCKS or text):
            cut = min(len(self.blocks), MAX_BLOCKS - 1)
            last = _folded(self.blocks[cut:] or self.blocks[-1:], kept[cut:], text, rest_cased)
            self.blocks[cut:] = [last]
            kept[cut:] = ["\n".join([*kept[cut:], text])]
        self.texts = kept if self.keep_text else None

    def _frame(self, element: etree._Element, tag: str, parent: _Frame) -> _Frame:
        block = tag in BLOCK_TAGS
        if not block and tag != "a" and not element.keys() and element is not self.root:
            return parent  # an inline tag without attributes changes nothing
        in_root = parent.in_root or element is self.root
        in_article = parent.in_article or tag == "article"
        boilerplate, region = parent.boilerplate, parent.region
        if not boilerplate:
            found = _landmark(element, parent.in_article)
            if (
                found is not None
                and element not in self.holds_root
                and not (in_root and self.measure(element) > self.largest_boilerplate)
            ):
                boilerplate, region = True, found
            elif in_root != parent.in_root or in_article != parent.in_article:
                region = self._plain_region(in_root, in_article)
        return _Frame(
            in_root, boilerplate, region, in_article, parent.in_link or tag == "a",
            f"{parent.path}/{tag}" if block else parent.path,
            _TAG_KIND.get(tag, 0) if block else parent.tag,
        )  # fmt: skip

    def _plain_region(self, in_root: bool, in_article: bool) -> int:
        return ARTICLE_BODY if in_article or (in_root and not self.root_is_page) else PAGE_BODY


def _landmark(element: etree._Element, in_article: bool) -> int | None:
    """The frame region an element opens, or None when it is not page frame."""
    tag = element.tag
    if tag in _TAG_REGION:
        return _TAG_REGION[tag]
    if tag in ("header", "footer") and not in_article:
        return _R[tag]
    attrib = element.attrib
    if not attrib:
        return None
    if "hidden" in attrib or attrib.get("aria-hidden") == "true":
        return _R["hidden text"]
    role = attrib.get("role", "").strip().lower()
    if role in _ROLE_REGION:
        return _ROLE_REGION[role]
    names = f"{attrib.get('class', '')} {attrib.get('id', '')}".lower()
    for word in _SPLIT.split(names):
        if word in _WORD_REGION:
            return _WORD_REGION[word]
        if word in _FRAME_WORD_REGION and not in_article:
            return _FRAME_WORD_REGION[word]
    return None


def _case(original: str, words: list[str], bag: int) -> int:
    """What the case of the words of ``original`` adds to their ``bag`` (16 bits); 0 when
    they are not as many as the block's case-folded ``words`` (a letter whose folding
    splits a word, as ``İ`` does, or a volatile token read differently: the block's case
    is then read as unchanged, the same way every time)."""
    cased = WORD.findall(original)
    return 0 if len(cased) != len(words) else (_bag(cased) - bag) & _MASK16


def _text_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=4).digest(), "big")


def _bag(words: list[str]) -> int:
    """The sum of the words' hashes (:func:`~auditor.evidence.blocks.word_hash`, inlined)."""
    return sum(map(zlib.crc32, map(str.encode, words))) & _MASK32


def _folded(
    blocks: list[Block], texts: list[str], rest: str, rest_cased: list[str | None]
) -> Block:
    """One block standing for ``blocks`` (past MAX_BLOCKS) and the ``rest`` of the text
    (past the pending cap, ``rest_cased`` with its case where that differs): their texts
    hashed together, their words summed."""
    first = blocks[0]
    words = WORD.findall(rest)
    bag = _bag(words)
    original = rest_cased[0] if rest_cased else None
    case = 0 if original is None else _case(original, words, bag)
    return Block(
        hash=_text_hash("\n".join([*texts, rest])),
        bag=(sum(b.bag for b in blocks) + bag) & _MASK32,
        tokens=sum(b.tokens for b in blocks) + len(words),
        path=first.path, region=first.region, tag=first.tag, flags=first.flags,
        case=(sum(b.case or 0 for b in blocks) + case) & _MASK16,
    )  # fmt: skip


def _numbers(text: str) -> tuple[tuple[str, str, str], ...]:
    """Each number with the word before and after it; none when there are more than
    MAX_NUMBERS (a table of figures is summarised as changed, not number by number)."""
    found: list[tuple[str, str, str]] = []
    for match in _NUMBER.finditer(text):
        if len(found) == MAX_NUMBERS:
            return ()
        before = _BEFORE.search(text, max(0, match.start() - 24), match.start())
        after = _AFTER.match(text, match.end(), match.end() + 24)
        found.append(
            (
                before.group(1)[:24] if before else "",
                match.group()[:24],
                after.group(1)[:24] if after else "",
            )
        )
    return tuple(found)

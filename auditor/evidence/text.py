"""Rules on page text shared by the fingerprint and the block cutter: which element is the
content root, what is never text, which names mark page frame, how text is normalised.

The fingerprint's text (:func:`normalise`) and a page's blocks
(:func:`normalise_blocks`) are NFKC'd and case-folded, their volatile tokens removed
(timestamps, clock times, "5 minutes ago", long hex or base64 tokens); blocks lose their
counters too ("12 comments", "1,234 views", "3 days ago", "5 min read": the ``exact``
hash keeps them, as it always has, so fingerprints of every age compare). The patterns
are written for case-folded text; a block's text with its case kept (for its ``cased``
sum) loses the same tokens through the same patterns, case ignored.

Touches: nothing.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from lxml import etree

from auditor.evidence.markup import Markup

__all__ = [
    "BOILERPLATE_ROLES",
    "BOILERPLATE_WORDS",
    "COUNTERS",
    "FRAME_TAGS",
    "MAX_BOILERPLATE_SHARE",
    "MIN_ROOT_SHARE",
    "NEVER_CONTENT",
    "PAGE_FRAME",
    "SPLIT",
    "VOLATILE",
    "WORD",
    "Lengths",
    "content_root",
    "elements",
    "normalise",
    "normalise_blocks",
    "visible_length",
    "without_volatile",
]


def _words(text: str) -> frozenset[str]:
    """A set of names written as one string, a space between each."""
    return frozenset(text.split())


#: Share of the body's text a ``<main>``/``<article>`` needs to be taken as the content root.
MIN_ROOT_SHARE = 0.1
#: Boilerplate holding more than this share of the root's text is kept (module docstring).
MAX_BOILERPLATE_SHARE = 0.5
NEVER_CONTENT = _words(
    """
    script style noscript iframe svg template button select input textarea canvas object
    embed audio video
    """
)
FRAME_TAGS = _words("nav aside form dialog menu")
PAGE_FRAME = frozenset({"header", "footer"})
BOILERPLATE_ROLES = _words(
    """
    navigation banner contentinfo complementary search dialog alertdialog menu menubar
    """
)
#: Parts of a class or id (split on ``-``, ``_`` and spaces) that mark boilerplate.
BOILERPLATE_WORDS = _words(
    """
    ad ads adv advert adverts advertisement advertising adslot adunit adsbygoogle gpt
    dfp banner cookie cookies consent gdpr cmp share sharing sharebar social related
    recommended recommendations recommend outbrain taboola newsletter subscribe promo
    sponsored sponsor comments comment disqus popup modal breadcrumb breadcrumbs
    trending popular mostread
    """
)
SPLIT = re.compile(r"[\s_\-]+")
VOLATILE = re.compile(
    r"\d{4}-\d\d-\d\d[t ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:z|[+-]\d\d:?\d\d)?"  # timestamps
    r"|\b\d{1,2}:\d\d(?::\d\d)?(?:\s?[ap]\.?m\.?)?\b"  # clock times
    r"|\b\d+\s+(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)\s+ago\b"  # relative times
    r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{16,}\b"  # long hex (ids, hashes)
    r"|\b(?=[a-z0-9+/]*\d)[a-z0-9+/]{24,}={0,2}",  # long base64-like tokens
)
#: Counters that move without an edit, removed from blocks (not from the ``exact`` text).
COUNTERS = re.compile(
    r"\b\d[\d,.]*\s?[km]?\s*(?:views?|comments?|likes?|shares?|repl(?:y|ies)|responses?"
    r"|reactions?|votes?|reads?|retweets?|followers?)\b"
    r"|\b(?:views?|comments?|likes?|shares?|replies|responses|reactions|votes)\s*[:(]\s*"
    r"\d[\d,.]*[km]?\b"
    r"|\b\d+\s+(?:days?|weeks?|months?|years?)\s+ago\b"
    r"|\b\d+\s*(?:min(?:ute)?s?)\s+read\b"
)
#: The same patterns for text whose case is kept (module docstring).
_VOLATILE_CASED = re.compile(VOLATILE.pattern, re.IGNORECASE)
#: The one word a VOLATILE match holds between two runs of spaces ("5 minutes ago").
_UNITS = re.compile(r"seconds?|secs?|minutes?|mins?|hours?|hrs?")
_UNITS_CASED = re.compile(_UNITS.pattern, re.IGNORECASE)
_IGNORECASE = int(re.IGNORECASE)  # an int: ``flags & re.IGNORECASE`` is an enum operation in Python
#: From a word's first digit to its end (a word: a run of anything but spaces).
_DIGIT_ON = re.compile(r"\d\S*")
_NEXT_WORD = re.compile(r"\s+(\S+)")
_COUNTERS_CASED = re.compile(COUNTERS.pattern, re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_NO_SPACE_SCRIPTS = "\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
WORD = re.compile(rf"[{_NO_SPACE_SCRIPTS}]|[^\W{_NO_SPACE_SCRIPTS}]+")
# Paths read from the document's root element (:func:`elements`): ``descendant-or-self::``
# there is ``//``, at about half its cost in libxml2 once a predicate is tested.
_MAIN = etree.XPath("(descendant-or-self::main | descendant-or-self::*[@role='main'])[1]")
#: The characters of an element's string value (its text nodes, at any depth).
_STRING_LENGTH = etree.XPath("string-length()")
_NEVER_CONTENT_TAGS = tuple(sorted(NEVER_CONTENT))


def elements(path: etree.XPath, tree: etree._Element) -> list[etree._Element]:
    """The elements ``path`` selects in the document of ``tree``, read from its root
    element (an XPath result may also hold strings, numbers or attribute values; those are
    left out)."""
    found = path(tree.getroottree().getroot())
    if not isinstance(found, list):
        return []
    return [node for node in found if isinstance(node, etree._Element)]


def content_root(
    tree: etree._Element, lengths: Lengths | None = None, markup: Markup | None = None
) -> etree._Element:
    """The first ``<main>``/``[role=main]``, else the longest ``<article>``, else ``<body>``; a
    candidate holding less than ``MIN_ROOT_SHARE`` of the body's text is passed over.
    (Elements found by tag in C, walked from the document's root element in document
    order: the first ``<body>`` ends its walk; ``markup``, the bytes the tree was parsed
    from, tells when no ``role`` can name a main.)"""
    measure = lengths or visible_length
    top = tree.getroottree().getroot()
    page = next(top.iter("body"), tree)
    least = MIN_ROOT_SHARE * measure(page)
    for candidate in _mains(tree, top, markup):
        if measure(candidate) >= least:
            return candidate
    sized = [(measure(a), a) for a in top.iter("article")]
    if sized:
        size, article = max(sized, key=lambda pair: pair[0])
        if size >= least:
            return article
    return page


def _mains(
    tree: etree._Element, top: etree._Element, markup: Markup | None
) -> list[etree._Element]:
    """What :data:`_MAIN` selects: the first ``<main>`` when no ``role`` attribute can be."""
    if markup is None or markup.may_hold(b"role"):
        return elements(_MAIN, tree)
    return list(itertools.islice(top.iter("main"), 1))


def visible_length(element: etree._Element) -> int:
    """Characters of text in ``element``, outside scripts, styles and the like: the text
    of every element of its subtree and the tail of every node below it, but the text of
    the ``NEVER_CONTENT`` elements (their children's text and tails still count). Read in
    C: the string value of ``element`` (every text node below it) less the text of those
    elements, rather than node by node in Python (a body's measure was a sixth of its
    fingerprint)."""
    found = _STRING_LENGTH(element)
    size = int(found) if isinstance(found, float) else 0  # always a float
    for node in element.iter(*_NEVER_CONTENT_TAGS):
        size -= len(node.text or "")
    return size


class Lengths:
    """:func:`visible_length` remembered per element of one page: the fingerprint and the
    block cut measure the same root, candidates and boilerplate."""

    def __init__(self) -> None:
        self._known: dict[etree._Element, int] = {}

    def __call__(self, element: etree._Element) -> int:
        known = self._known.get(element)
        if known is None:
            known = self._known[element] = visible_length(element)
        return known


def normalise(raw: str) -> str:
    """NFKC, case-folded, volatile tokens removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", raw).casefold()
    text = without_volatile(text)
    return " ".join(text.split())


def without_volatile(text: str, pattern: re.Pattern[str] = VOLATILE) -> str:
    """``pattern.sub(" ", text)`` for :data:`VOLATILE` or its cased twin, the pattern run
    only over windows around the words that hold a digit (it is tried at every character,
    0.1 us each: most of a small page's normalisation, on prose with a few numbers).

    Every match starts in a word holding a digit (every branch needs one, in the word it
    starts in), and crosses a run of spaces only after a word ending in a digit or after
    a unit ("5 minutes ago"). So a window is such a word, and the next word while the last
    one ends in a digit or is a unit; windows start and end beside spaces (or the text's
    ends), which the pattern's ``\\b`` reads alike, and the text between them is left as
    the whole-text pattern leaves it."""
    ends = [found.end() for found in _DIGIT_ON.finditer(text)]
    if not ends:
        return text
    size = len(text)
    starts = [size - found.end() for found in _DIGIT_ON.finditer(text[::-1])]
    units = _UNITS_CASED if pattern.flags & _IGNORECASE else _UNITS
    parts: list[str] = []
    written = window_end = 0
    for start, end in zip(reversed(starts), ends, strict=True):
        if start < window_end:
            continue  # a word the window before already holds
        window_end = _window_end(text, start, end, units)
        parts.append(text[written:start])
        parts.append(pattern.sub(" ", text[start:window_end]))
        written = window_end
    parts.append(text[written:])
    return "".join(parts)


def _window_end(text: str, start: int, end: int, units: re.Pattern[str]) -> int:
    """Where a window from the word ``text[start:end]`` ends (:func:`without_volatile`)."""
    while text[end - 1].isdecimal() or units.fullmatch(text, start, end):
        following = _NEXT_WORD.match(text, end)
        if following is None:
            break
        start, end = following.span(1)
    return end


def normalise_blocks(raws: list[str]) -> tuple[list[str], list[str | None]]:
    """Each block's text NFKC'd and case-folded, volatile tokens and counters removed; and
    each with its case kept, the same tokens removed, where casefold changes it (None where
    it does not: most code, lower-case lists). The regexes run once over the texts that
    hold a digit (every pattern needs one), joined by NUL. Whitespace is left as it is."""
    if not raws:
        return [], []
    kept = unicodedata.normalize("NFKC", "\x00".join(raws))
    folded = kept.casefold()
    texts = folded.split("\x00")
    cased: list[str | None] = [None] * len(texts)
    if folded != kept:
        for i, (text, original) in enumerate(zip(texts, kept.split("\x00"), strict=True)):
            if text != original:
                cased[i] = original
    cleaned = _clean(texts, [i for i, text in enumerate(texts) if _DIGIT.search(text)], False)
    _clean(cased, [i for i in cleaned if cased[i] is not None], True)
    return texts, cased


def _clean(texts: list[str] | list[str | None], numbered: list[int], cased: bool) -> list[int]:
    """Volatile tokens and counters removed, in place, from the ``numbered`` texts; which
    of them lost some. (Only those are read again with their case kept: a text whose
    case-folded form lost nothing loses nothing with its case either, and were a pattern
    to read the two differently, the block's words would differ in number and its case
    be read as unchanged, :func:`~auditor.evidence.segment.cut_blocks`.)"""
    if not numbered:
        return []
    volatile, counters = (_VOLATILE_CASED, _COUNTERS_CASED) if cased else (VOLATILE, COUNTERS)
    joined = "\x00".join(texts[i] or "" for i in numbered)
    cleaned = counters.sub(" ", without_volatile(joined, volatile)).split("\x00")
    lost = []
    for i, text in zip(numbered, cleaned, strict=True):
        if text != texts[i]:
            lost.append(i)
            texts[i] = text
    return lost

"""Sitemap extensions of one URL: hreflang alternates, images, videos, Google News fields.

A urlset entry may carry, besides its ``loc`` and ``lastmod``:

- ``<xhtml:link rel="alternate" hreflang="de" href="..."/>``, its other-language versions;
- ``<image:image>`` elements (Google's image extension), each with an ``<image:loc>``;
- ``<video:video>`` elements (Google's video extension);
- ``<news:news>`` with ``<news:publication><news:language>``, ``<news:title>`` and
  ``<news:publication_date>`` (Google News).

Only a file that carries them pays for them: a plain record's third field stays the news
date text (or None), and an entry's ``extensions`` stays None. A record with any of them
carries a :class:`RecordExtras` instead, built by :class:`ExtrasBuilder` (the exact
reader, element by element) or by :func:`extras_from_tail` (the fast path, from the text
its pattern validated).

What is kept is bounded: counts, the first image's location, the news title and
language, and at most :data:`MAX_ALTERNATES` hreflang alternates per URL (the count is
always the true one). A page is translated into a few dozen languages at most; a
generator listing thousands of alternates per URL would otherwise multiply the
inventory's memory by as much.

Touches: nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from auditor.models import Extensions

__all__ = [
    "MAX_ALTERNATES",
    "Extensions",
    "ExtrasBuilder",
    "RecordExtras",
    "extras_from_tail",
]

#: hreflang alternates kept per URL (the count is kept whatever the number).
MAX_ALTERNATES = 50


class RecordExtras(NamedTuple):
    """A raw record's third field when the record carries extensions: the news
    publication date as written (None when absent) and the extensions."""

    news: str | None
    extensions: Extensions


class ExtrasBuilder:
    """Gathers one record's extensions as the exact reader meets their elements."""

    __slots__ = ("alternates", "count", "first_image", "images", "language", "title", "videos")

    def __init__(self) -> None:
        self.count = self.images = self.videos = 0
        self.alternates: list[tuple[str, str]] = []
        self.first_image: str | None = None
        self.title: str | None = None
        self.language: str | None = None

    def alternate(self, attrs: dict[str, str]) -> None:
        """An ``xhtml:link``: counted when it is an hreflang alternate."""
        lang, href = attrs.get("hreflang"), attrs.get("href")
        if attrs.get("rel") != "alternate" or lang is None or href is None:
            return
        self.count += 1
        if len(self.alternates) < MAX_ALTERNATES:
            self.alternates.append((lang, href))

    def image_loc(self, text: str) -> None:
        """An ``image:loc``'s text: the first non-empty one is kept."""
        if self.first_image is None and text:
            self.first_image = text

    def record(self, news: str | None) -> RecordExtras:
        """The record's third field, with ``news`` its publication date text."""
        ext = Extensions(
            self.count,
            tuple(self.alternates),
            self.images,
            self.first_image,
            self.videos,
            self.title or None,
            self.language or None,
        )
        return RecordExtras(news, ext)


_WS = "[ \t\r\n]"


@lru_cache(maxsize=32)
def _tail_patterns(
    image: str | None, video: str | None, xhtml: str | None
) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """(image loc, hreflang link) patterns for the declared prefixes (None: not declared)."""
    image_loc = None
    if image is not None:
        p = re.escape(image)
        image_loc = re.compile(f"<{p}:loc>([^<]*)</{p}:loc>")
    link = None
    if xhtml is not None:
        p = re.escape(xhtml)
        link = re.compile(
            f'<{p}:link{_WS}+rel="alternate"{_WS}+hreflang="([^"<]*)"{_WS}+href="([^"<]*)"'
        )
    return image_loc, link


def _text(value: str) -> str:
    """A value as expat gives it: line ends made LF, ``&amp;`` read, stripped."""
    if "\r" in value:
        value = value.replace("\r\n", "\n").replace("\r", "\n")
    return value.replace("&amp;", "&").strip()


def extras_from_tail(
    tail: str, image: str | None, video: str | None, xhtml: str | None
) -> RecordExtras | str:
    """The extensions in the part of a record the fast path's pattern validated (after
    ``lastmod``: ``changefreq``, ``priority`` and the extension elements whose prefixes
    are given), or ``""`` when it holds none.

    The pattern accepted only literal tags, so counting opening tags is exact; values
    hold only ``&amp;`` among entities, and attribute values no tab, CR or LF.
    """
    images = tail.count(f"<{image}:image>") if image is not None else 0
    videos = tail.count(f"<{video}:video>") if video is not None else 0
    image_loc, link = _tail_patterns(image, video, xhtml)
    pairs = link.findall(tail) if link is not None else []
    if not (images or videos or pairs):
        return ""
    first = None
    if images and image_loc is not None:
        first = next(filter(None, map(_text, image_loc.findall(tail))), None)
    alternates = tuple(
        (lang.replace("&amp;", "&"), href.replace("&amp;", "&")) for lang, href in pairs
    )
    ext = Extensions(len(pairs), alternates[:MAX_ALTERNATES], images, first, videos)
    return RecordExtras(None, ext)

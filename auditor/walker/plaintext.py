"""Text sitemaps: one URL a line, UTF-8, read as the bytes arrive.

Touches: nothing.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

from auditor.walker.records import URL_START, Record

__all__ = ["TextSitemap"]

_LINE_END = re.compile(r"\r\n?|\n")


class TextSitemap:
    """Reads one plain-text file. Iterate :meth:`batches` once.

    ``kind`` becomes ``"text"`` when the first line that is not blank is a URL;
    ``problems`` (the list given, shared with the caller) gets a ``not-a-sitemap``
    pair otherwise.
    """

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.kind: str | None = None
        self.problems = problems

    def batches(self, chunks: Iterator[bytes]) -> Iterator[list[Record]]:
        """Yield the file's URLs in batches, as the bytes arrive."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        for chunk in chunks:
            # A bare CR ends a line too; a CRLF split across chunks only makes a blank line.
            lines = _LINE_END.split(pending + decoder.decode(chunk))
            pending = lines.pop()
            batch = self._records(lines)
            if batch is None:
                return
            if batch:
                yield batch
        batch = self._records([pending + decoder.decode(b"", final=True)])
        if batch:
            yield batch
        if self.kind is None and not self.problems:  # only characters str.strip() removes
            self.problems.append(("not-a-sitemap", "plain text without a single URL"))

    def _records(self, lines: list[str]) -> list[Record] | None:
        batch: list[Record] = []
        for line in lines:
            url = line.strip()
            if not url:
                continue
            if self.kind is None:
                if not URL_START.match(url):
                    self.problems.append(
                        ("not-a-sitemap", f"plain text whose first line is not a URL: {url[:80]!r}")
                    )
                    return None
                self.kind = "text"
            batch.append((url, None, None))
        return batch

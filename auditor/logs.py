"""Stderr for the command line: where log records go, and the progress line.

Where log records go is the command line's choice, never the library's.

Every module logs to ``logging.getLogger(__name__)``; the package logger has a
:class:`logging.NullHandler` and nothing else, so a program that imports
auditor decides for itself what it sees. The CLI turns ``-v``/``-q`` into a
level and sends the records to stderr for the length of one command
(:func:`logging_to`), then takes its handler away again.

Levels (what ``-v`` and ``-vv`` add):

- WARNING and above: shown by default (``-q``: ERROR and above only). The
  library's own events are all INFO or DEBUG, since every failure it meets is
  also a value in its output (a problem, a page error, a count in the
  summary): a default run prints no log line. WARNING is still shown rather
  than silenced so that an event the output would not carry is never hidden;
- INFO (``-v``): each HTTP request (URL, status, bytes handed out after
  decompression, seconds from the request to the body's close), each retry
  and each wait a host asked for, each sitemap file read, each walker problem,
  each sampled page skipped or not usable, robots.txt's policy;
- DEBUG (``-vv``): the routine pauses between requests to a host (``--delay``,
  Crawl-delay), redirects followed, files listed twice and read once.

Touches: nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["PACKAGE", "LogFormatter", "Progress", "level_for", "logging_to"]

PACKAGE = "auditor"
#: A running count (files, URLs) is redrawn at most this often.
REDRAW_EVERY = 0.2

#: The progress line's messages, logged under -v (named for what they are, not for this module).
_progress_log = logging.getLogger(PACKAGE + ".progress")


def level_for(verbose: int, quiet: bool) -> int:
    """The lowest level shown: ERROR with -q, WARNING by default, INFO with -v, DEBUG with -vv."""
    if quiet:
        return logging.ERROR
    return (logging.WARNING, logging.INFO)[verbose] if verbose < 2 else logging.DEBUG


class LogFormatter(logging.Formatter):
    """``  12.345 INFO http: message``: seconds since the command started, the level,
    and the module without the package name."""

    def __init__(self) -> None:
        super().__init__()
        self._started = time.monotonic()

    def format(self, record: logging.LogRecord) -> str:
        """One line (a traceback, if any, follows on the lines below)."""
        name = record.name.removeprefix(PACKAGE + ".")
        elapsed = time.monotonic() - self._started
        line = f"{elapsed:8.3f} {record.levelname} {name}: {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


@contextmanager
def logging_to(stream: TextIO, level: int) -> Iterator[None]:
    """Send auditor's records at ``level`` and above to ``stream`` while the block runs."""
    logger = logging.getLogger(PACKAGE)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(LogFormatter())
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
        handler.close()


class Progress:
    """The CLI's one progress renderer.

    On a terminal, one line on stderr redrawn in place; nothing when stderr is
    not a terminal, or under ``-q``. Under ``-v`` the log lines tell the story,
    so the line is not drawn (it would tangle with them) and each stage message
    becomes an INFO record instead.
    """

    def __init__(self, stream: TextIO, *, verbose: int = 0, quiet: bool = False) -> None:
        self._stream = stream
        self._logged = verbose > 0 and not quiet
        self._drawn = not quiet and not verbose and stream.isatty()
        self._last = 0.0
        self._shown = False

    def __call__(self, message: str) -> None:
        """A stage of the work: "walking ...", "sampled 3 of 50 pages"."""
        if self._logged:
            _progress_log.info("%s", message)
        elif self._drawn:
            self._draw(message)

    def walk(self, files: int, urls: int) -> None:
        """A walk's running count, redrawn at most every REDRAW_EVERY seconds."""
        now = time.monotonic()
        if self._drawn and now - self._last >= REDRAW_EVERY:
            self._last = now
            self._draw(f"{files:,} files read, {urls:,} URLs so far")

    def clear(self) -> None:
        """Take the line away (before the results are printed)."""
        if self._shown:
            self._stream.write("\r\033[K")
            self._stream.flush()
            self._shown = False

    def _draw(self, text: str) -> None:
        self._shown = True
        self._stream.write(f"\r\033[Kauditor: {text}")
        self._stream.flush()

"""Crawl logs read into :class:`FetchRecord` and :class:`LogProblem` values, streamed.

Three formats (:data:`FORMATS`), each read in bounded memory, in file order:

- ``jsonl``: one JSON object a line (UTF-8, a BOM tolerated on the first line);
- ``csv``: a header row, then one row a fetch (comma-delimited, UTF-8, a BOM tolerated,
  quoted fields may hold newlines);
- ``warc``: WARC/1.0 and 1.1, gzip'd per record, as a whole or not at all (judged by the
  magic bytes, whatever the name): ``response`` and ``revisit`` records of http(s) URLs
  are fetches; every other record (``warcinfo``, ``request``, ``metadata``, ``resource``,
  a ``dns:`` response...) is passed over silently.

A JSON Lines object or CSV row gives ``url`` (absolute http or https), ``fetched_at``
(ISO 8601, with ``Z`` or an offset, a naive time being UTC; or epoch seconds, a number or a
string of digits), ``status`` (an integer 100-599, digits in a string too, and ``200.0``
as pandas writes a column with gaps; absent, null or empty: no answer) and optionally a
content hash, the first non-empty of :data:`HASH_FIELDS`, taken as its text: an ETag is
not one (a server's validator, which may change while the content does not). CSV column
names are matched ignoring case and surrounding spaces; other keys and columns are
ignored. Times are handed out in UTC.

A WARC fetch is ``WARC-Target-URI``, ``WARC-Date`` and the HTTP status; its ``headers``
the HTTP headers, a name given twice (in any case) once with its values joined by ", ", as
requests gives them for the audit's own fetches; its ``content_hash`` the
``WARC-Payload-Digest``. A response's body is what a browser gets (chunks joined, gzip or
deflate decoded, by the audit's own :class:`~auditor.http.body.Body`), kept up to
``max_body`` bytes (``truncated`` beyond, or when the crawler marked it
``WARC-Truncated``), None when it cannot be decoded (brotli, broken gzip or chunks: the
digest judges it then). A revisit has no body, the status of its HTTP block, if it has one
(else None), and the digest of the payload it repeats.

warcio parses each record's WARC and HTTP headers; the records are framed here, so that
reading goes on after damage (warcio's own iterator stops at the first): a record whose
length does not end it, or headers that do not parse, is a ``bad-record`` and reading
resumes at the next line that starts a record (in a gzip'd WARC, at the next gzip member
after a broken one); records are counted on from there. A file that ends inside a record
ends with ``truncated-file``.

What cannot be used is a :class:`LogProblem` naming its line (CSV: the line its row starts
on; WARC: the record's number, counting every record) and is skipped; everything around
it is read. A line that is not UTF-8 is named (``bad-json``, or ``bad-row`` in a CSV) rather
than decoded with replacement characters, which would hand out a URL or hash that was never
in the log. Blank lines are skipped silently.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from auditor.crawl.fields import HASH_FIELDS
from auditor.crawl.logrows import read_csv, read_jsonl
from auditor.crawl.records import FetchRecord, LogProblem
from auditor.crawl.warcfile import read_warc

__all__ = [
    "DEFAULT_MAX_BODY",
    "FORMATS",
    "HASH_FIELDS",
    "LINE_MAX_BYTES",
    "LOG_PROBLEM_CODES",
    "detect_format",
    "read_crawl_log",
]

FORMATS = ("jsonl", "csv", "warc")
#: A JSON Lines or CSV line longer than this (bytes, its line ending included) is skipped.
LINE_MAX_BYTES = 1024 * 1024
#: A WARC response's body is kept up to this many bytes (decoded), and marked truncated.
DEFAULT_MAX_BODY = 10 * 1024 * 1024
LOG_PROBLEM_CODES = frozenset(
    {
        "bad-json",
        "bad-row",
        "missing-field",
        "bad-url",
        "bad-time",
        "bad-status",
        "bad-record",
        "line-too-long",
        "truncated-file",
    }
)

_SUFFIXES = (
    (".jsonl", "jsonl"),
    (".ndjson", "jsonl"),
    (".json", "jsonl"),
    (".csv", "csv"),
    (".warc", "warc"),
    (".warc.gz", "warc"),
)


def detect_format(path_or_name: str) -> str | None:
    """The crawl log format a file name's suffix says (case ignored), or None.

    ``.jsonl``, ``.ndjson`` and ``.json`` (read as JSON Lines) are ``jsonl``; ``.csv`` is
    ``csv``; ``.warc`` and ``.warc.gz`` are ``warc``. Compressed JSON Lines or CSV, ARC
    files and ``-`` (standard input) are not recognised.
    """
    name = path_or_name.lower()
    return next((fmt for suffix, fmt in _SUFFIXES if name.endswith(suffix)), None)


def read_crawl_log(
    stream: BinaryIO,
    format: str,
    *,
    max_body: int = DEFAULT_MAX_BODY,
    max_line: int = LINE_MAX_BYTES,
) -> Iterator[FetchRecord | LogProblem]:
    """The fetches of a crawl log and the problems met reading it, in file order.

    ``format`` is one of :data:`FORMATS` (``ValueError`` otherwise, raised at once).
    ``max_body`` caps a WARC body (decoded, as the audit decodes its own fetches), beyond
    which the record is marked ``truncated`` and the rest skipped unread into memory;
    ``max_line`` caps a JSON Lines or CSV line. The stream is read lazily, once, and left
    open (it is the caller's). A file that ends inside a WARC record ends the stream with a
    ``truncated-file`` problem, everything before it yielded.
    """
    if max_body < 0 or max_line < 1:
        raise ValueError("max_body must be >= 0 and max_line >= 1")
    if format == "jsonl":
        return read_jsonl(stream, max_line)
    if format == "csv":
        return read_csv(stream, max_line)
    if format == "warc":
        return read_warc(stream, max_body)
    raise ValueError(f"unknown crawl log format {format!r} (expected one of {FORMATS})")

"""JSON Lines and CSV crawl logs, read line by line in bounded memory (the formats are
described in :mod:`auditor.crawl.logfile`).

Touches: nothing.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import BinaryIO

from auditor.crawl.fields import HASH_FIELDS, row_item
from auditor.crawl.records import FetchRecord, LogProblem
from auditor.http.body import CHUNK_SIZE

__all__ = ["read_csv", "read_jsonl"]

_BOM = b"\xef\xbb\xbf"


def _lines(stream: BinaryIO, max_line: int) -> Iterator[tuple[int, bytes | None]]:
    """Each line's number and bytes, None for a line over ``max_line`` (skipped unheld)."""
    number = 0
    while line := stream.readline(max_line + 1):
        number += 1
        if len(line) <= max_line:
            yield number, (line.removeprefix(_BOM) if number == 1 else line)
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(CHUNK_SIZE)
        yield number, None


def _too_long(number: int, max_line: int) -> LogProblem:
    return LogProblem(number, "line-too-long", f"line over {max_line:,} bytes")


def read_jsonl(stream: BinaryIO, max_line: int) -> Iterator[FetchRecord | LogProblem]:
    """The fetches and problems of a JSON Lines log, line by line."""
    for number, line in _lines(stream, max_line):
        if line is None:
            yield _too_long(number, max_line)
        elif line.strip():
            yield _jsonl_item(number, line)


def _jsonl_item(number: int, line: bytes) -> FetchRecord | LogProblem:
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return LogProblem(number, "bad-json", f"not UTF-8 (byte {exc.start + 1})")
    except (ValueError, RecursionError) as exc:
        return LogProblem(number, "bad-json", f"not JSON: {str(exc)[:80]}")
    if not isinstance(value, dict):
        return LogProblem(number, "bad-row", f"a JSON {type(value).__name__}, not an object")
    return row_item(number, value)


class _LineTooLong(Exception):
    pass


class _TextLines:
    """A CSV's lines as text for :func:`csv.reader`, counted; a line over the cap raises
    :class:`_LineTooLong` (and is skipped), after which reading goes on. Bytes that are
    not UTF-8 are kept as surrogates and their last line number noted."""

    def __init__(self, stream: BinaryIO, max_line: int) -> None:
        self._lines = _lines(stream, max_line)
        self.number = 0  # lines handed out (or skipped) so far
        self.undecodable = 0  # the last line that was not UTF-8

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        self.number, line = next(self._lines)
        if line is None:
            raise _LineTooLong
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            self.undecodable = self.number
            return line.decode("utf-8", "surrogateescape")


def _csv_rows(stream: BinaryIO, max_line: int) -> Iterator[tuple[int, list[str] | LogProblem]]:
    """Each non-blank CSV row with the line it starts on, or the problem reading it."""
    lines = _TextLines(stream, max_line)
    reader = csv.reader(lines)
    while True:
        start = lines.number + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except _LineTooLong:
            yield start, _too_long(start, max_line)
            continue
        except csv.Error as exc:
            yield start, LogProblem(start, "bad-row", f"not CSV: {exc}")
            continue
        if lines.undecodable >= start:
            yield start, LogProblem(start, "bad-row", "not UTF-8")
        elif len(row) > 1 or (row and row[0].strip()):
            yield start, row


def read_csv(stream: BinaryIO, max_line: int) -> Iterator[FetchRecord | LogProblem]:
    """The fetches and problems of a CSV log (a header row first), row by row."""
    rows = _csv_rows(stream, max_line)
    first = next(rows, None)
    if first is None:
        return
    number, header = first
    if isinstance(header, LogProblem):
        yield header  # no row can be read without the header
        return
    columns = _columns(header)
    if "url" not in columns or "fetched_at" not in columns:
        yield LogProblem(number, "missing-field", f"the header has no url or fetched_at: {header}")
        return
    for number, row in rows:
        if isinstance(row, LogProblem):
            yield row
        elif len(row) != len(header):
            yield LogProblem(number, "bad-row", f"{len(row)} fields, the header has {len(header)}")
        else:
            yield row_item(number, {name: row[i] for name, i in columns.items()})


def _columns(header: list[str]) -> dict[str, int]:
    """The used columns' indexes by name (case and spaces ignored; the first of a name)."""
    wanted = {"url", "fetched_at", "status", *HASH_FIELDS}
    columns: dict[str, int] = {}
    for index, name in enumerate(header):
        key = name.strip().lower()
        if key in wanted:
            columns.setdefault(key, index)
    return columns

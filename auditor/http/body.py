"""Response bodies: streamed, decompressed in bounded steps, capped, timed.

gzip is judged by the magic bytes ``1f 8b``, whatever the name;
``Content-Encoding: gzip``/``deflate`` is decoded too, and ``br``/``zstd``
(:mod:`auditor.http.codings`). Every byte handed out counts against the cap (after
decompression), so a bomb of any of them stops at the cap. A coding auditor cannot
decode is the problem ``unsupported-encoding``: none of its bytes is handed out.

Touches: the network, the disk.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.http.codings import CodingError, decoder_for

if TYPE_CHECKING:  # the network stack loads with the client, never for a local file
    import urllib3

    from auditor.http.deadline import Deadline

__all__ = [
    "CHUNK_SIZE",
    "DEFAULT_MAX_BYTES",
    "GZIP_MAGIC",
    "Body",
    "prepend",
    "read_as_it_arrives",
    "read_local_file",
]

#: The sitemap protocol's size limit, uncompressed (50 MiB).
DEFAULT_MAX_BYTES = 52_428_800
CHUNK_SIZE = 65_536
GZIP_MAGIC = b"\x1f\x8b"
_INFLATE_STEP = 4 * CHUNK_SIZE


class _TooLarge(Exception):
    pass


class _Unsupported(Exception):
    pass


class Body:
    """A response body streamed as decoded chunks, capped, with what went wrong.

    Iterate it once. Afterwards ``problem`` is ``None`` or a ``(code, detail)``
    pair (``too-large``, ``timeout`` when the deadline cut it off, whether or not
    the body had a length, ``not-well-formed`` for a broken gzip stream,
    ``http-error`` for a connection dropped or reset before the end its
    Content-Length or chunks announced); everything yielded before the problem
    is good data.
    """

    def __init__(
        self,
        raw_chunks: Iterator[bytes],
        *,
        content_encoding: str = "",
        max_bytes: int = DEFAULT_MAX_BYTES,
        deadline: Deadline | None = None,
        on_close: Callable[[bool], None] | None = None,
    ) -> None:
        self._raw = raw_chunks
        self._encoding = content_encoding.strip().lower()
        self._max_bytes = max_bytes
        self._deadline = deadline
        self._on_close = on_close
        self.problem: tuple[str, str] | None = None
        self.bytes_read = 0  # decoded bytes handed out
        self.gzipped = False
        self.complete = False  # read to its end without a problem

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._capped(self._decoded())
            self.complete = True
        except _TooLarge:
            self.problem = ("too-large", f"stopped at the {self._max_bytes:,}-byte limit")
        except zlib.error as exc:
            self.problem = ("not-well-formed", f"broken compressed stream: {exc}")
        except CodingError as exc:
            self.problem = ("not-well-formed", str(exc))
        except _Unsupported as exc:
            self.problem = ("unsupported-encoding", str(exc))
        except _network_errors() as exc:
            self.problem = self._network_problem(exc)
        finally:
            self.close()

    def close(self) -> None:
        """Release the connection (idempotent)."""
        if self._deadline is not None:
            self._deadline.cancel()
        if self._on_close is not None:
            self._on_close(self.complete)
            self._on_close = None

    def also_on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` too once the body is closed (at once if it already is): a
        fleet's host gate (auditor.fleet) ends the request's turn there."""
        earlier = self._on_close
        if earlier is None:
            callback()
            return

        def both(complete: bool) -> None:
            try:
                earlier(complete)
            finally:
                callback()

        self._on_close = both

    def _network_problem(self, exc: BaseException) -> tuple[str, str]:
        read = f"{self.bytes_read:,} bytes"
        deadline = self._deadline
        if deadline is not None and (deadline.expired or deadline.remaining() <= 0):
            return ("timeout", f"body not complete within the deadline ({read} read)")
        return ("http-error", f"connection broken after {read}: {type(exc).__name__}")

    def _timed(self) -> Iterator[bytes]:
        for chunk in self._raw:
            if self._deadline is not None and self._deadline.remaining() <= 0:
                raise TimeoutError("deadline")
            if chunk:
                yield chunk
        if self._deadline is not None and self._deadline.expired:
            # The watchdog shut the socket: a body with no length of its own (neither
            # Content-Length nor chunks) then ends as quietly as a finished one.
            raise TimeoutError("deadline")

    def _decoded(self) -> Iterator[bytes]:
        chunks = self._timed()
        # Codings are listed in the order applied: undone from the last.
        for coding in reversed([c.strip() for c in self._encoding.split(",")]):
            chunks = self._undo(coding, chunks)
        first = b""
        for chunk in chunks:  # gather two bytes to judge gzip by its magic
            first += chunk
            if len(first) >= 2:
                break
        if first[:2] == GZIP_MAGIC:
            self.gzipped = True
            yield from _inflate(prepend(first, chunks), 16 + zlib.MAX_WBITS, self._max_bytes)
        else:
            yield from prepend(first, chunks)

    def _undo(self, coding: str, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """``chunks`` with one content coding undone (capped); raises _Unsupported for a
        coding auditor cannot read."""
        if coding in ("", "identity"):
            return chunks
        if coding in ("gzip", "x-gzip"):
            return _inflate(chunks, 16 + zlib.MAX_WBITS, self._max_bytes)
        if coding == "deflate":
            return _inflate_deflate(chunks, self._max_bytes)
        decoder = decoder_for(coding)
        if decoder is None:
            raise _Unsupported(
                f"Content-Encoding {coding[:40]!r} is not one auditor reads: not parsed"
            )
        return decoder(chunks, self._max_bytes)

    def _capped(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            room = self._max_bytes - self.bytes_read
            if len(chunk) > room:
                if room:
                    self.bytes_read += room
                    yield chunk[:room]
                raise _TooLarge
            self.bytes_read += len(chunk)
            yield chunk


def _network_errors() -> tuple[type[BaseException], ...]:
    """What a connection that breaks while a body streams raises: an OSError (requests'
    RequestException is one) or urllib3's HTTPError, which exists only once urllib3 is
    loaded (by the client: a local file's body never loads it)."""
    urllib3 = sys.modules.get("urllib3")
    if urllib3 is None:
        return (OSError,)
    return (OSError, urllib3.exceptions.HTTPError)


def prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    """``first`` (unless empty), then the rest of a stream whose head was read ahead."""
    if first:
        yield first
    yield from rest


def _inflate(chunks: Iterator[bytes], wbits: int, cap: int) -> Iterator[bytes]:
    """Decompress a (possibly multi-member) stream in bounded pieces, at most cap+1 bytes."""
    inflater = zlib.decompressobj(wbits)
    produced = 0
    between_members = True  # no member started yet, or the last one ended cleanly
    carry = b""  # the start of a next member's header split across chunks
    for chunk in chunks:
        data = carry + chunk if carry else chunk
        carry = b""
        while data or not between_members:
            if between_members:
                if produced and len(data) < 2:
                    carry = data
                    break
                if produced and data[:2] != GZIP_MAGIC:
                    return  # trailing bytes after the last member are ignored
                inflater = zlib.decompressobj(wbits)
                between_members = False
            step = min(cap - produced + 1, _INFLATE_STEP)
            out = inflater.decompress(data, step)
            produced += len(out)
            if out:
                yield out
            if produced > cap:
                return  # Body._capped raises _TooLarge on the extra byte
            if inflater.eof:
                data, between_members = inflater.unused_data, True
                continue
            data = inflater.unconsumed_tail
            if not data and len(out) < step:
                break  # this chunk is used up and nothing is pending
    if not between_members or (carry and GZIP_MAGIC.startswith(carry)):
        # a member cut off, or the first byte of a next member's magic and nothing more
        # (gzip -d calls that truncated too; any other lone byte is trailing garbage)
        raise zlib.error("truncated compressed stream")


def _inflate_deflate(chunks: Iterator[bytes], cap: int) -> Iterator[bytes]:
    """``Content-Encoding: deflate``: zlib-wrapped as the RFC says, or raw as some servers send."""
    first = next(chunks, b"")
    wbits = zlib.MAX_WBITS if first[:1] and (first[0] & 0x0F) == 8 else -zlib.MAX_WBITS
    return _inflate(prepend(first, chunks), wbits, cap)


def read_as_it_arrives(raw: urllib3.response.BaseHTTPResponse) -> Iterator[bytes]:
    """The raw body in pieces as they arrive (``read1``), so that when the deadline
    cuts a slow response, every byte received before the cut is kept. A body whose
    ``Content-Length`` is read is over: urllib3 closed it with its last byte, and is
    not asked for the empty read that would say so."""
    while chunk := raw.read1(CHUNK_SIZE, decode_content=False):
        yield chunk
        if raw.length_remaining == 0:
            return


def read_local_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Body:
    """A local file as a :class:`Body`: same gzip sniffing and cap as the network."""
    handle = path.open("rb")

    def chunks() -> Iterator[bytes]:
        while chunk := handle.read(CHUNK_SIZE):
            yield chunk

    return Body(chunks(), max_bytes=max_bytes, on_close=lambda _complete: handle.close())

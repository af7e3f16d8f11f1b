"""Content codings beyond gzip: brotli (``br``) and Zstandard (``zstd``), decoded in
bounded steps.

A server may send ``br`` or ``zstd`` whatever the request asked for. Both are decoded
when their package is installed (``brotli``, ``zstandard``: dependencies of auditor),
with the same cap as gzip: every step's output is bounded (:data:`STEP` bytes for
brotli, 1 MiB for zstd), so a bomb stops at the cap with a step or two in memory.
``Accept-Encoding`` names only what can be decoded (:data:`ACCEPT_ENCODING`); a coding
auditor cannot read is named (``unsupported-encoding``), its bytes never parsed.

Touches: nothing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator

__all__ = ["ACCEPT_ENCODING", "STEP", "CodingError", "decoder_for", "supported"]

#: Output bytes one decoding step may produce at most.
STEP = 262_144
#: Compressed bytes fed to the Zstandard decoder at once (it has no output bound of its
#: own): its largest expansion (an RLE block, 4 bytes to 128 KiB) keeps one step's output
#: within 1 MiB. Measured: a 40 MiB sitemap (692 KiB of zstd) decodes in 0.09 s (0.06 s
#: fed 256 bytes at a time, whose bomb held 23.5 MiB at once against 2.5 MiB here).
_ZSTD_FEED = 32
#: RFC 8878's window a decoder of ``Content-Encoding: zstd`` must support, and the
#: most auditor grants: a frame asking for more is refused, not allocated.
ZSTD_MAX_WINDOW = 8 * 1024 * 1024


class CodingError(Exception):
    """A compressed stream that is broken or cut off."""


Decoder = Callable[[Iterator[bytes], int], Iterator[bytes]]


def supported() -> tuple[str, ...]:
    """The codings beyond gzip and deflate this installation can decode."""
    found = []
    if importlib.util.find_spec("brotli") is not None:
        found.append("br")
    if importlib.util.find_spec("zstandard") is not None:
        found.append("zstd")
    return tuple(found)


#: What every request accepts: only codings auditor can decode.
ACCEPT_ENCODING = ", ".join(("gzip", "deflate", *supported()))


def decoder_for(coding: str) -> Decoder | None:
    """The bounded decoder of ``coding`` (``br``, ``zstd``), or None when not installed
    or not one of them."""
    if coding == "br" and "br" in supported():
        return _unbrotli
    if coding == "zstd" and "zstd" in supported():
        return _unzstd
    return None


def _unbrotli(chunks: Iterator[bytes], cap: int) -> Iterator[bytes]:
    """Brotli, at most ``cap + 1`` bytes, each step at most :data:`STEP`."""
    import brotli

    decoder = brotli.Decompressor()
    produced = 0
    started = False
    try:
        for chunk in chunks:
            started = True
            data = chunk
            while True:
                out = decoder.process(data, output_buffer_limit=min(STEP, cap - produced + 1))
                data = b""
                produced += len(out)
                if out:
                    yield out
                if produced > cap:
                    return
                if decoder.can_accept_more_data():
                    break
        if started and not decoder.is_finished():
            raise CodingError("truncated brotli stream")
    except brotli.error as exc:
        raise CodingError(f"broken brotli stream: {exc}") from exc


def _unzstd(chunks: Iterator[bytes], cap: int) -> Iterator[bytes]:
    """Zstandard (one frame or several), at most ``cap + 1`` bytes, in bounded steps."""
    import zstandard

    context = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    decoder = context.decompressobj()
    produced = 0
    pending = False  # a frame begun and not ended
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                if decoder.eof:  # the last frame ended: the rest begins another
                    decoder = context.decompressobj()
                out = decoder.decompress(view[:_ZSTD_FEED].tobytes())
                rest = decoder.unused_data if decoder.eof else b""
                view = memoryview(rest + view[_ZSTD_FEED:].tobytes()) if rest else view[_ZSTD_FEED:]
                pending = not decoder.eof
                produced += len(out)
                if out:
                    yield out
                if produced > cap:
                    return
        if pending:
            raise CodingError("truncated zstd stream")
    except zstandard.ZstdError as exc:
        raise CodingError(f"broken zstd stream: {exc}") from exc

"""Misbehaving HTTP exchanges: a drawn :class:`Fault` plus a body, written as a raw script.

A fault is drawn before the server's port is known; :func:`script_for` writes the
exchange for a given body once it is (bodies name the server's origin). Each
fault says what a correct client may conclude: :attr:`Exchange.whole` when the
body must arrive complete and intact, :attr:`Exchange.prefix` when whatever
arrives must be a prefix of it.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass

import brotli
import zstandard
from hypothesis import strategies as st

from tests.fuzz.rawserver import Close, Endless, Hang, Pause, Reset, Send, Step

HEAD_FAULTS = (
    "none",
    "none",
    "none",
    "http10",
    "lf-only",
    "no-reason",
    "100-continue",
    "garbage-status",
    "huge-header",
    "many-headers",
    "no-colon",
    "obs-fold",
    "endless-headers",
    "endless-status",
    "duplicate-length",
    "nothing",
)
FRAMINGS = (
    "length",
    "length",
    "chunked",
    "close",
    "short-length",
    "long-length",
    "bad-length",
    "broken-chunked",
    "length-and-chunked",
    "endless",
    "endless-chunked",
)
ENCODINGS = (
    "identity",
    "identity",
    "gzip",
    "x-gzip",
    "deflate",
    "deflate-raw",
    "gzip-magic",
    "gzip-in-gzip",
    "gzip-members",
    "br",
    "zstd",
    "bogus",
)
#: Content-Encodings the client decodes (or gzip it recognises by its magic bytes).
DECODED = frozenset(
    {"identity", "gzip", "x-gzip", "deflate", "deflate-raw", "gzip-magic", "gzip-in-gzip"}
    | {"gzip-members", "br", "zstd"}
)
DELIVERIES = ("all", "all", "pieces", "drip-fast", "drip-slow", "stall")
ENDINGS = ("close", "close", "reset", "hang")
STATUSES = (200, 200, 200, 200, 203, 204, 206, 304, 404, 410, 500, 503, 999)
GARBAGE_STATUS = (
    b"FOO BAR\r\n",
    b"HTTP/1.1 abc OK\r\n",
    b"\x00\xff\xfe\r\n",
    b"\r\n",
    b"HTTP/1.1 20 OK\r\n",
    b"HTTP/9.9 200 OK\r\n",
    b"ICY 200 OK\r\n",
    b"HTTP/1.1 -200 X\r\n",
    b"HTTP/1.1 99999999999999999999 X\r\n",
    b"<html>no status line at all</html>\r\n",
)


@dataclass(frozen=True)
class Fault:
    """How one response misbehaves (or, with every field plain, behaves)."""

    head: str = "none"
    framing: str = "length"
    encoding: str = "identity"
    delivery: str = "all"
    ending: str = "close"
    status: int = 200
    cut: float | None = None  # stop the body after this share of it
    garbage: bytes = GARBAGE_STATUS[0]


@dataclass(frozen=True)
class Exchange:
    """The script to play, and what a correct client may conclude from it."""

    steps: list[Step]
    body: bytes  # the decoded body meant (the repeating unit, for an endless one)
    whole: bool  # it must arrive complete and intact
    prefix: bool  # whatever arrives must be a prefix of it
    endless: bool
    slow: bool  # the server takes longer than the deadline


_DIMENSIONS = {
    "head": st.sampled_from(HEAD_FAULTS),
    "framing": st.sampled_from(FRAMINGS),
    "encoding": st.sampled_from(ENCODINGS),
    "delivery": st.sampled_from(DELIVERIES),
    "ending": st.sampled_from(ENDINGS),
    "status": st.sampled_from(STATUSES),
    "cut": st.floats(0, 1),
    "garbage": st.sampled_from(GARBAGE_STATUS),
}


@st.composite
def faults(draw: st.DrawFn) -> Fault:
    """A well-behaved exchange with up to three of its dimensions changed at once.

    Structure-aware on purpose: a response broken in every way at once only ever
    fails at its first fault; one or two faults over a sound exchange reach the
    code behind each of them.
    """
    changes = draw(st.lists(st.sampled_from(sorted(_DIMENSIONS)), max_size=3, unique=True))
    if "garbage" in changes:
        changes.append("head")
    values = {name: draw(_DIMENSIONS[name]) for name in changes}
    if "garbage" in values:
        values["head"] = "garbage-status"
    return Fault(**values)


def encode_body(body: bytes, encoding: str) -> tuple[bytes, str | None]:
    """The bytes to send for ``body`` and the Content-Encoding header to send with them."""
    if encoding in ("gzip", "x-gzip"):
        return gzip.compress(body, mtime=0), encoding
    if encoding == "deflate":
        return zlib.compress(body), "deflate"
    if encoding == "deflate-raw":
        packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        return packer.compress(body) + packer.flush(), "deflate"
    if encoding == "gzip-magic":
        return gzip.compress(body, mtime=0), None
    if encoding == "gzip-in-gzip":
        return gzip.compress(gzip.compress(body, mtime=0), mtime=0), "gzip"
    if encoding == "gzip-members":
        half = len(body) // 2
        return gzip.compress(body[:half], mtime=0) + gzip.compress(body[half:], mtime=0), "gzip"
    if encoding == "br":  # decoded (auditor.http.codings), capped as gzip is
        return brotli.compress(body, quality=1), "br"
    if encoding == "zstd":
        return zstandard.ZstdCompressor(level=1).compress(body), "zstd"
    if encoding == "bogus":
        return body, "compress, snappy"
    return body, None


def _status_line(fault: Fault, eol: bytes) -> bytes:
    if fault.head == "garbage-status":
        return fault.garbage
    version = b"HTTP/1.0" if fault.head == "http10" else b"HTTP/1.1"
    reason = b"" if fault.head == "no-reason" else b" Whatever"
    return b"%s %d%s%s" % (version, fault.status, reason, eol)


def _chunked(data: bytes, broken: bool) -> bytes:
    """``data`` in chunks of 700 bytes; ``broken``: a chunk-size line after the first is garbage."""
    pieces = [
        b"%x\r\n%s\r\n" % (len(p), p) for p in (data[i : i + 700] for i in range(0, len(data), 700))
    ]
    if broken:
        return b"".join(pieces[:1]) + b"zz-not-hex\r\n" + b"".join(pieces[1:]) + b"0\r\n\r\n"
    return b"".join(pieces) + b"0\r\n\r\n"


def script_for(fault: Fault, body: bytes, content_type: str) -> Exchange:
    """The raw exchange for ``body`` served with ``fault``."""
    eol = b"\n" if fault.head == "lf-only" else b"\r\n"
    wire, encoding = encode_body(body, fault.encoding)
    endless = fault.framing in ("endless", "endless-chunked")
    headers = [b"Content-Type: " + content_type.encode()]
    if encoding:
        headers.append(b"Content-Encoding: " + encoding.encode())
    framing = fault.framing
    if framing in ("length", "length-and-chunked"):
        headers.append(b"Content-Length: %d" % len(wire))
    elif framing == "short-length":
        headers.append(b"Content-Length: %d" % max(0, len(wire) - 7))
    elif framing == "long-length":
        headers.append(b"Content-Length: %d" % (len(wire) + 1000))
    elif framing == "bad-length":
        headers.append(b"Content-Length: twelve")
    if framing in ("chunked", "broken-chunked", "length-and-chunked", "endless-chunked"):
        headers.append(b"Transfer-Encoding: chunked")
    headers += _header_faults(fault)
    head = [] if fault.head != "100-continue" else [b"HTTP/1.1 100 Continue" + eol + eol]
    head.append(_status_line(fault, eol) + b"".join(h + eol for h in headers))
    steps: list[Step] = []
    if fault.head == "endless-status":
        steps = [Send(b"HTTP/1.1 200 "), Endless(b"x" * 4096)]
    elif fault.head == "endless-headers":
        steps = [Send(b"".join(head)), Endless(b"X-More: yes" + eol)]
    elif fault.head == "nothing":
        steps = []
    else:
        steps = [Send(b"".join(head) + eol)]
        steps += _body_steps(fault, wire, body)
    steps += _ending(fault)
    simple_head = fault.head in ("none", "http10", "lf-only", "no-reason", "100-continue")
    decoded = fault.encoding in DECODED
    prefix = simple_head and decoded and fault.status == 200
    if endless:  # the repeating unit is sent as it is, whatever the headers claim
        prefix = prefix and fault.encoding in ("identity", "gzip-magic")
    slow = fault.delivery in ("drip-slow", "stall") or fault.ending == "hang" or endless
    whole = (
        prefix
        and framing in ("length", "chunked", "close", "length-and-chunked")
        and fault.cut is None
        and fault.ending == "close"
        and fault.delivery in ("all", "pieces", "drip-fast")
    )
    if fault.head == "lf-only" and framing in ("chunked", "length-and-chunked", "endless-chunked"):
        whole = prefix = False  # chunk lines framed with CRLF under LF headers: anyone's guess
    return Exchange(steps, body, whole, prefix, endless, slow)


def _header_faults(fault: Fault) -> list[bytes]:
    if fault.head == "huge-header":
        return [b"X-Huge: " + b"a" * 70_000]
    if fault.head == "many-headers":
        return [b"X-H%d: v" % i for i in range(150)]
    if fault.head == "no-colon":
        return [b"this line has no colon"]
    if fault.head == "obs-fold":
        return [b"X-Folded: a", b"  continued"]
    if fault.head == "duplicate-length":
        return [b"Content-Length: 3", b"Content-Length: 999999"]
    if fault.status in (301, 302, 303, 307, 308):
        return [b"Location: /"]
    return []


def _body_steps(fault: Fault, wire: bytes, body: bytes) -> list[Step]:
    if fault.framing == "endless":
        return [Endless(body or b" ")]
    if fault.framing == "endless-chunked":
        unit = body or b" "
        return [Endless(b"%x\r\n%s\r\n" % (len(unit), unit))]
    if fault.framing in ("chunked", "broken-chunked", "length-and-chunked"):
        wire = _chunked(wire, fault.framing == "broken-chunked")
    if fault.cut is not None:
        wire = wire[: int(len(wire) * fault.cut)]
    if fault.delivery == "pieces":
        return [Send(wire, pieces=7)]
    if fault.delivery == "drip-fast":
        return [Send(wire, pieces=min(len(wire), 20) or 1, gap=0.005)]
    if fault.delivery == "drip-slow":  # a steady trickle that outlasts any deadline here
        return [Send(wire, pieces=max(len(wire), 1), gap=0.05)]
    if fault.delivery == "stall":  # half, then nothing for longer than the deadline
        half = len(wire) // 2
        return [Send(wire[:half]), Pause(3.0), Send(wire[half:])]
    return [Send(wire)]


def _ending(fault: Fault) -> list[Step]:
    return {"close": [Close()], "reset": [Reset()], "hang": [Hang()]}[fault.ending]

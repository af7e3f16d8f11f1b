"""Byte-level mutations layered over structured inputs: cuts, hostile tokens, splices, flips."""

from __future__ import annotations

from hypothesis import strategies as st

#: Tokens worth inserting: markup, hostile declarations, encodings' tell-tale bytes.
HOSTILE_TOKENS = (
    b"<",
    b">",
    b"&",
    b"&amp;",
    b"&#0;",
    b"&#xD800;",
    b"]]>",
    b"<![CDATA[",
    b"<!--",
    b"-->",
    b"<?xml version='1.0'?>",
    b"<url>",
    b"</url>",
    b"<loc>",
    b"</loc>",
    b"</urlset>",
    b"<sitemapindex>",
    b"<html>",
    b"<!DOCTYPE html>",
    b'<!DOCTYPE urlset [<!ENTITY x "FUZZMARK">]>',
    b'<!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/dtd">',
    b"&x;",
    b'<!ENTITY x SYSTEM "file:///etc/passwd">',
    b"\x00",
    b"\xff\xfe",
    b"\xfe\xff",
    b"\xef\xbb\xbf",
    b"\x1f\x8b",
    b"\xc3",
    b"\xe6\x97",
    b"\r",
    b"\r\n",
    b" " * 100,
    b"https://example.com/",
)


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with a few mutations: cut, insert, delete, duplicate, flip."""
    for _ in range(draw(st.integers(1, 4))):
        size = len(data)
        at = draw(st.integers(0, size))
        op = draw(st.sampled_from(["truncate", "insert", "insert", "delete", "dup", "flip"]))
        if op == "truncate":
            data = data[:at]
        elif op == "insert":
            token = draw(st.sampled_from(HOSTILE_TOKENS) | st.binary(min_size=1, max_size=8))
            data = data[:at] + token + data[at:]
        elif op == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 16)) :]
        elif op == "dup":
            data = data[:at] + data[at : at + draw(st.integers(1, 64))] + data[at:]
        elif size:
            i = at % size
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
    return data

"""A site's latest inventory as one compact blob: the ``url_state`` of history.

Layout (version 2), all integers little-endian::

    byte 0      version (2)
    bytes 1-4   uint32: length of the JSON header
    header      {"urls", "loc_format", "precisions", "sitemaps", "raw_format", "news",
                 "sections"}
    sections    zlib streams, lengths in the header:
                loc        UTF-8 text, one loc a line ("lines"), or a JSON list ("json")
                           when some loc holds a line break
                lastmod    int64 microseconds since the epoch, UTC, NaT as int64 min;
                           byte-shuffled (all first bytes, then all second bytes...)
                precision  int8 code into "precisions", -1 when absent
                sitemap    int32 code into "sitemaps", -1 when absent
                raw_shape  the lastmod as written (``lastmod_raw``): int8, the number of
                           the shape of the instant it is written in (rendered back on
                           reading), 0 when kept as written, -1 for none (see
                           :mod:`auditor.history.written`); only when "raw_format" is set
                raw        the texts of code 0, in order, as loc ("lines", or "json")
                news       the news publication date, as lastmod; only when "news" is true

Version 1 (four sections, no ``raw_format`` or ``news``) is still read: its frame has no
``lastmod_raw`` and ``news_publication_date`` columns. Those two columns let a later run
stand in for reading an unchanged sitemap file again (a 304): the entries come back
exactly as the walker made them.

Microseconds rather than nanoseconds: every lastmod is exact to the microsecond
(Python datetimes are), and the walker accepts years 0001 to 9999, which
nanoseconds since 1970 cannot hold.

Touches: nothing.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from auditor.errors import HistoryError
from auditor.history.written import VERBATIM, decode_written, encode_written

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FULL_STATE_COLUMNS",
    "STATE_COLUMNS",
    "STATE_VERSION",
    "StateColumns",
    "StateLocs",
    "decode_state",
    "encode_state",
    "state_columns",
    "state_locs",
]

STATE_VERSION = 2
_READABLE_VERSIONS = frozenset({1, STATE_VERSION})
#: The columns every decoded state has, in order.
STATE_COLUMNS = ("loc", "lastmod", "lastmod_precision", "sitemap")
#: The columns of a state encoded from a whole inventory (version 2 and later).
FULL_STATE_COLUMNS = (*STATE_COLUMNS, "lastmod_raw", "news_publication_date")
_LEVEL = 1  # level 6: 8% smaller, twice as slow (1M URLs: 10.2 MB in 1.14 s, 11.0 MB in 0.52 s)
_HEADER_SIZE = struct.Struct("<BI")
_SECTIONS = ("loc", "lastmod", "precision", "sitemap")


def encode_state(entries: pd.DataFrame) -> bytes:
    """The blob of ``entries`` (loc, lastmod, lastmod_precision, sitemap, and
    lastmod_raw and news_publication_date when the frame has them)."""
    locs = [str(loc) for loc in entries["loc"]]
    loc_format, loc_bytes = _encode_locs(locs)
    precisions, precision_codes = _codes(entries["lastmod_precision"], np.int8)
    sitemaps, sitemap_codes = _codes(entries["sitemap"], np.int32)
    lastmod = _microseconds(entries["lastmod"])
    raw = {
        "loc": loc_bytes,
        "lastmod": _shuffle(lastmod),
        "precision": precision_codes.tobytes(),
        "sitemap": sitemap_codes.tobytes(),
    }
    raw_format = None
    if "lastmod_raw" in entries:
        column = entries["lastmod_raw"].tolist()  # NaN or None for none
        texts = [t if isinstance(t, str) else None for t in column]
        shapes, verbatim = encode_written(texts, lastmod)
        raw["raw_shape"] = shapes.tobytes()
        raw_format, raw["raw"] = _encode_texts(list(verbatim))
    if news := "news_publication_date" in entries:
        raw["news"] = _shuffle(_microseconds(entries["news_publication_date"]))
    names = _sections(raw_format, news)
    packed = [zlib.compress(raw[name], _LEVEL) for name in names]
    header = json.dumps(
        {
            "urls": len(locs),
            "loc_format": loc_format,
            "precisions": precisions,
            "sitemaps": sitemaps,
            "raw_format": raw_format,
            "news": news,
            "sections": [len(section) for section in packed],
        },
        separators=(",", ":"),
    ).encode("utf-8")
    return b"".join([_HEADER_SIZE.pack(STATE_VERSION, len(header)), header, *packed])


def decode_state(blob: bytes) -> pd.DataFrame:
    """The DataFrame of a blob made by :func:`encode_state`.

    ``lastmod`` is ``datetime64[us, UTC]`` (the inventory's unit), ``lastmod_precision``
    and ``sitemap`` are categoricals, ``loc`` holds Python strings. ``lastmod_raw``
    (Python strings or None) and ``news_publication_date`` follow when they were stored.
    """
    import pandas as pd

    header, sections = _split(blob)
    n = int(header["urls"])
    locs = _decode_locs(header["loc_format"], sections["loc"], n)
    precision = np.frombuffer(sections["precision"], dtype="<i1")
    sitemap = np.frombuffer(sections["sitemap"], dtype="<i4")
    columns = {
        "loc": pd.Series(locs, dtype=object),
        "lastmod": _instants(sections["lastmod"], n),
        "lastmod_precision": _categorical(precision, header["precisions"]),
        "sitemap": _categorical(sitemap, header["sitemaps"]),
    }
    if "raw" in sections:
        micros = _unshuffle(sections["lastmod"], n)
        shapes = np.frombuffer(sections["raw_shape"], dtype=np.int8)
        if shapes.size != n:
            raise HistoryError(f"url_state: {shapes.size} lastmod shapes for {n} URLs")
        kept = int((shapes == VERBATIM).sum())
        verbatim = _decode_texts(header.get("raw_format"), sections["raw"], kept)
        texts = decode_written(shapes, micros, [str(t) for t in verbatim])
        columns["lastmod_raw"] = pd.Series(texts, dtype=object)
    if "news" in sections:
        columns["news_publication_date"] = _instants(sections["news"], n)
    return pd.DataFrame(columns)


def _instants(section: bytes, n: int) -> pd.Series:
    import pandas as pd

    micros = _unshuffle(section, n).view("datetime64[us]")  # int64 min is NaT
    return pd.Series(micros).dt.tz_localize("UTC")


def _sections(raw_format: str | None, news: bool) -> tuple[str, ...]:
    """The sections a blob holds, in order."""
    written = ("raw_shape", "raw") if raw_format else ()
    return (*_SECTIONS, *written, *(("news",) if news else ()))


def _categorical(codes: np.ndarray, names: list[str]) -> pd.Categorical[str]:
    import pandas as pd

    try:
        return pd.Categorical.from_codes(codes, pd.Index(names, dtype=str))
    except ValueError as exc:  # a code out of range
        raise HistoryError(f"url_state: damaged codes ({exc})") from exc


def _encode_locs(locs: list[str]) -> tuple[str, bytes]:
    text = "\n".join(locs)
    if text.count("\n") == max(len(locs) - 1, 0):
        return "lines", text.encode("utf-8", "surrogatepass")
    return "json", json.dumps(locs, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _encode_texts(texts: list[str | None]) -> tuple[str, bytes]:
    """Texts that may be None: "lines" (None as an empty line) unless some text is
    empty or holds a line break, then "json" (None as null)."""
    plain = [text or "" for text in texts]
    joined = "\n".join(plain)
    if all(text is None or text for text in texts) and joined.count("\n") == max(len(texts) - 1, 0):
        return "lines", joined.encode("utf-8", "surrogatepass")
    return "json", json.dumps(texts, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _decode_texts(text_format: str | None, data: bytes, n: int) -> list[str | None]:
    if text_format == "lines":
        return [text or None for text in _decode_locs("lines", data, n)]
    if text_format == "json":
        texts: list[str | None] = _decode_locs("json", data, n)  # type: ignore[assignment]
        return texts
    raise HistoryError(f"url_state: unknown text format {text_format!r}")


def _decode_locs(loc_format: str, data: bytes, n: int) -> list[str]:
    text = data.decode("utf-8", "surrogatepass")
    if loc_format == "json":
        locs: list[str] = json.loads(text)
    elif loc_format == "lines":
        locs = text.split("\n") if n else []
    else:
        raise HistoryError(f"url_state: unknown loc format {loc_format!r}")
    if len(locs) != n:
        raise HistoryError(f"url_state: {len(locs)} locs where the header says {n}")
    return locs


def _microseconds(column: pd.Series) -> np.ndarray:
    """Each instant in microseconds since the epoch, NaT as int64's minimum. A column of
    UTC instants (the walker's) is read as it is: pandas' conversion costs a third of a
    small site's save."""
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.DatetimeTZDtype) and str(dtype.tz) == "UTC":
        instants = column.array.as_unit("us")
        return np.asarray(instants.asi8, dtype="<i8")
    stamps = pd.to_datetime(column, utc=True).dt.tz_localize(None)
    return np.asarray(stamps.to_numpy(dtype="datetime64[us]").view(np.int64), dtype="<i8")


def _codes(column: pd.Series, dtype: type[np.integer]) -> tuple[list[str], np.ndarray]:
    """Category names and each row's code (-1 when absent)."""
    import pandas as pd

    categorical = (  # a categorical column is its own Categorical: no copy made
        column.array if isinstance(column.dtype, pd.CategoricalDtype) else pd.Categorical(column)
    )
    names = [str(name) for name in categorical.categories]
    if len(names) > np.iinfo(dtype).max:
        raise ValueError(f"url_state: {len(names)} distinct values do not fit {dtype.__name__}")
    return names, categorical.codes.astype(np.dtype(dtype).newbyteorder("<"))


def _shuffle(values: np.ndarray) -> bytes:
    """All first bytes, then all second bytes...: zlib finds far more repeats."""
    return values.view(np.uint8).reshape(-1, 8).T.tobytes()


def _unshuffle(data: bytes, n: int) -> np.ndarray:
    planes = np.frombuffer(data, dtype=np.uint8)
    if planes.size != 8 * n:
        raise HistoryError(f"url_state: {planes.size} lastmod bytes for {n} URLs")
    return np.ascontiguousarray(planes.reshape(8, n).T).view("<i8").reshape(n)


def _split(blob: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The header and the decompressed sections; HistoryError when the blob is unusable."""
    header, spans = _spans(blob)
    try:
        sections = {name: zlib.decompress(blob[a:b]) for name, (a, b) in spans.items()}
    except zlib.error as exc:
        raise HistoryError(f"url_state: damaged blob ({exc})") from exc
    return header, sections


def _spans(blob: bytes) -> tuple[dict[str, Any], dict[str, tuple[int, int]]]:
    """The header and where each compressed section lies (start, end)."""
    try:
        version, size = _HEADER_SIZE.unpack_from(blob)
        if version not in _READABLE_VERSIONS:
            raise HistoryError(f"url_state: version {version}, this auditor reads {STATE_VERSION}")
        start = _HEADER_SIZE.size
        header = json.loads(blob[start : start + size])
        names = _sections(header.get("raw_format"), bool(header.get("news")))
        offset, spans = start + size, {}
        for name, length in zip(names, header["sections"], strict=True):
            spans[name] = (offset, offset + int(length))
            offset += int(length)
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        raise HistoryError(f"url_state: damaged blob ({exc})") from exc
    return header, spans


@dataclass(frozen=True)
class StateLocs:
    """The locs of a ``url_state`` blob and each one's sub-sitemap, without a DataFrame:
    the sub-sitemaps as codes (int32, -1 for none) into ``sitemaps``, the locs read in
    batches, decompressed as they go (a million take a few MB at a time, not a hundred)."""

    blob: bytes
    urls: int
    sitemaps: list[str]
    sitemap_codes: np.ndarray
    loc_format: str
    loc_span: tuple[int, int]

    def batches(self, size: int = 65_536) -> Iterator[list[str]]:
        """The locs in inventory order, about ``size`` at a time."""
        if self.loc_format != "lines":  # a loc holds a line break: the whole JSON list
            locs = _decode_locs(self.loc_format, zlib.decompress(self._locs()), self.urls)
            for start in range(0, len(locs), size):
                yield locs[start : start + size]
            return
        yield from _line_batches(self._locs(), self.urls, size)

    def _locs(self) -> bytes:
        start, end = self.loc_span
        return self.blob[start:end]


def state_locs(blob: bytes) -> StateLocs:
    """The :class:`StateLocs` of a blob made by :func:`encode_state`."""
    header, spans = _spans(blob)
    start, end = spans["sitemap"]
    try:
        codes = np.frombuffer(zlib.decompress(blob[start:end]), dtype="<i4")
    except zlib.error as exc:
        raise HistoryError(f"url_state: damaged blob ({exc})") from exc
    n = int(header["urls"])
    if codes.size != n:
        raise HistoryError(f"url_state: {codes.size} sitemap codes for {n} URLs")
    names = [str(name) for name in header["sitemaps"]]
    return StateLocs(blob, n, names, codes, str(header["loc_format"]), spans["loc"])


class StateColumns(NamedTuple):
    """The columns a plan reads of a ``url_state`` blob, without a DataFrame: the locs,
    each one's sub-sitemap as a code (int32, -1 for none) into ``sitemaps``, and each
    lastmod as int64 microseconds since the epoch (the int64 minimum for none)."""

    locs: list[str]
    sitemaps: list[str]
    sitemap_codes: np.ndarray
    lastmod: np.ndarray


def state_columns(blob: bytes) -> StateColumns:
    """The :class:`StateColumns` of a blob made by :func:`encode_state` (its other
    sections not decompressed)."""
    header, spans = _spans(blob)
    n = int(header["urls"])
    try:
        loc, sitemap, lastmod = (zlib.decompress(blob[a:b]) for a, b in
                                 (spans["loc"], spans["sitemap"], spans["lastmod"]))  # fmt: skip
    except zlib.error as exc:
        raise HistoryError(f"url_state: damaged blob ({exc})") from exc
    locs = _decode_locs(header["loc_format"], loc, n)
    codes = np.frombuffer(sitemap, dtype="<i4")
    names = [str(name) for name in header["sitemaps"]]
    if len(locs) != n or codes.size != n:
        raise HistoryError(f"url_state: {len(locs)} locs, {codes.size} sitemap codes for {n} URLs")
    if n and (int(codes.min()) < -1 or int(codes.max()) >= len(names)):
        raise HistoryError("url_state: damaged sitemap codes")
    return StateColumns(locs, names, codes, _unshuffle(lastmod, n))


def _line_batches(packed: bytes, n: int, size: int) -> Iterator[list[str]]:
    """The lines of a zlib stream of ``n`` locs joined by line breaks, in batches."""
    inflate = zlib.decompressobj()
    rest, count, batch = b"", 0, []
    try:
        for start in range(0, len(packed), 1 << 18):
            data = rest + inflate.decompress(packed[start : start + (1 << 18)])
            *lines, rest = data.split(b"\n")
            batch += [line.decode("utf-8", "surrogatepass") for line in lines]
            if len(batch) >= size:
                count += len(batch)
                yield batch
                batch = []
        rest += inflate.flush()
    except zlib.error as exc:
        raise HistoryError(f"url_state: damaged blob ({exc})") from exc
    if n:
        batch.append(rest.decode("utf-8", "surrogatepass"))
    if count + len(batch) != n:
        raise HistoryError(f"url_state: {count + len(batch)} locs where the header says {n}")
    if batch:
        yield batch

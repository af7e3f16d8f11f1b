"""The lastmods as written (``lastmod_raw``), kept compactly beside the instants.

Most generators write every lastmod in one shape of the instant itself
(``2026-11-29``, ``2026-11-29T10:00:00Z``, ``2026-11-29T10:00:00.123+00:00``...).
Such a text is wholly given by the instant url_state keeps anyway, so it is stored as
the number of its shape (one byte a URL) and rendered back on reading: a million
distinct stamps cost a megabyte before compression, not the 9 MB of their text. Any
other text (another offset, an invalid value) is kept as written. Rendering is
vectorised (the code points built in a matrix viewed as strings), so either way costs
about what splitting the text would.

Touches: nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from auditor.errors import HistoryError

__all__ = ["NO_TEXT", "SHAPES", "VERBATIM", "decode_written", "encode_written", "render"]

#: Shape codes besides the shapes' own (1, 2...): no text, and a text kept as written.
NO_TEXT, VERBATIM = -1, 0
#: (unit, suffix) of each shape, numbered from 1; each has its own length.
SHAPES: tuple[tuple[str, str], ...] = (
    ("day", ""),
    ("minute", "Z"),
    ("minute", "+00:00"),
    ("second", "Z"),
    ("second", "+00:00"),
    ("milli", "Z"),
    ("milli", "+00:00"),
    ("micro", "Z"),
    ("micro", "+00:00"),
)
_TIME_WIDTH = {"day": 0, "minute": 6, "second": 9, "milli": 13, "micro": 16}  # "Thh:mm..."
_WIDTHS = tuple(10 + _TIME_WIDTH[unit] + len(suffix) for unit, suffix in SHAPES)
_NAT = np.iinfo(np.int64).min
_MICROS_A_DAY = 86_400_000_000
#: Up to this many texts are compared one by one: a whole-array comparison's fixed cost
#: (a dozen numpy steps a shape) is most of a small site's save; more go as arrays.
FEW_TEXTS = 256
_SHAPE_OF_WIDTH = {width: shape for shape, width in enumerate(_WIDTHS, start=1)}
_EPOCH = datetime(1970, 1, 1)
_MICROSECOND = timedelta(microseconds=1)
_WHOLE_SECOND = len("0001-01-01T00:00:00")
_ISO_WIDTH = {unit: 10 + width for unit, width in _TIME_WIDTH.items()}  # of an isoformat


def encode_written(texts: list[str | None], micros: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Each text's shape code (int8) given its instant (``micros``: int64 microseconds,
    int64 min for none), and the texts kept as written (code :data:`VERBATIM`), in order.
    A small site's few texts are compared one by one (:data:`FEW_TEXTS`)."""
    if len(texts) <= FEW_TEXTS:
        try:
            return _encode_few(texts, micros)
        except OverflowError:  # an instant past Python's years 1 to 9999: the arrays' way
            pass
    return _encode_many(texts, micros)


def _encode_many(texts: list[str | None], micros: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """:func:`encode_written` a whole array at a time."""
    n = len(texts)
    codes = np.zeros(n, dtype=np.int8)
    lengths = np.fromiter((-1 if t is None else len(t) for t in texts), np.int64, n)
    codes[lengths < 0] = NO_TEXT
    dated = micros != _NAT
    for shape, width in enumerate(_WIDTHS, start=1):
        rows = np.flatnonzero(dated & (lengths == width))
        if rows.size:
            written = np.array([texts[i] for i in rows], dtype=f"U{width}")
            codes[rows[render(micros[rows], shape) == written]] = shape
    verbatim = [str(texts[i]) for i in np.flatnonzero(codes == VERBATIM)]
    return codes, verbatim


def _encode_few(texts: list[str | None], micros: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """:func:`encode_written` text by text: each shape has its own length, so a text is
    compared with its instant written in the one shape of its length, by Python
    (OverflowError for an instant Python cannot write)."""
    codes: list[int] = []
    verbatim: list[str] = []
    for text, micro in zip(texts, micros.tolist(), strict=True):
        if text is None:
            codes.append(NO_TEXT)
            continue
        shape = _SHAPE_OF_WIDTH.get(len(text), VERBATIM)
        if shape and micro != _NAT and text == _written(micro, shape):
            codes.append(shape)
        else:
            codes.append(VERBATIM)
            verbatim.append(str(text))
    return np.array(codes, dtype=np.int8), verbatim


def _written(micros: int, shape: int) -> str:
    """The instant ``micros`` (microseconds since the epoch, UTC) written in ``shape``, as
    :func:`render` writes it: cut from its ``isoformat`` (``0001-01-01T00:00:00.000000``,
    years of 4 digits, the fraction truncated as render truncates it)."""
    unit, suffix = SHAPES[shape - 1]
    text = (_EPOCH + _MICROSECOND * micros).isoformat()
    if len(text) == _WHOLE_SECOND:  # no fraction written when it is zero
        text += ".000000"
    return text[: _ISO_WIDTH[unit]] + suffix


def decode_written(codes: np.ndarray, micros: np.ndarray, verbatim: list[str]) -> np.ndarray:
    """The texts (an object array, None for none) of :func:`encode_written`'s codes."""
    texts = np.full(len(codes), None, dtype=object)
    kept = np.flatnonzero(codes == VERBATIM)
    if len(kept) != len(verbatim) or codes.min(initial=0) < NO_TEXT:
        raise HistoryError("url_state: damaged lastmods as written")
    texts[kept] = verbatim
    for shape in range(1, len(SHAPES) + 1):
        rows = np.flatnonzero(codes == shape)
        if rows.size:
            if (micros[rows] == _NAT).any():
                raise HistoryError("url_state: a lastmod shape without its instant")
            texts[rows] = render(micros[rows], shape).tolist()
    if codes.max(initial=0) > len(SHAPES):
        raise HistoryError("url_state: unknown lastmod shape")
    return texts


def render(micros: np.ndarray, shape: int) -> np.ndarray:
    """The instants (int64 microseconds, UTC, years 1 to 9999) written in ``shape``."""
    unit, suffix = SHAPES[shape - 1]
    n = len(micros)
    days = np.floor_divide(micros, _MICROS_A_DAY)
    year, month, day = _civil(days)
    pieces = [_digits(year, 4), _text("-", n), _digits(month, 2), _text("-", n), _digits(day, 2)]
    if unit != "day":
        within = micros - days * _MICROS_A_DAY
        pieces += [_text("T", n), _digits(within // 3_600_000_000, 2), _text(":", n)]
        pieces.append(_digits(within // 60_000_000 % 60, 2))
        if unit != "minute":
            pieces += [_text(":", n), _digits(within // 1_000_000 % 60, 2)]
        if unit == "milli":
            pieces += [_text(".", n), _digits(within // 1_000 % 1_000, 3)]
        elif unit == "micro":
            pieces += [_text(".", n), _digits(within % 1_000_000, 6)]
        pieces.append(_text(suffix, n))
    matrix = np.ascontiguousarray(np.concatenate(pieces, axis=1))  # code points, native order
    return matrix.view(f"U{matrix.shape[1]}").reshape(n)


def _civil(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of days since 1970-01-01 in the proleptic Gregorian calendar:
    Howard Hinnant's ``civil_from_days``, in integer arithmetic a whole array at a time."""
    z = days + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1_460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month, day


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """``values`` (non-negative) as ``width`` digits each, zero-padded: (n, width) code
    points."""
    out = np.empty((len(values), width), dtype=np.uint32)
    rest = values.astype(np.int64)
    for column in range(width - 1, -1, -1):
        out[:, column] = 48 + rest % 10
        rest = rest // 10
    return out


def _text(text: str, n: int) -> np.ndarray:
    """The same ASCII ``text`` on each of ``n`` rows: (n, len(text)) code points."""
    return np.tile(np.array([ord(c) for c in text], dtype=np.uint32), (n, 1))

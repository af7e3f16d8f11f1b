"""PNG files of a chart's pixels, written without an imaging library.

The charts are opaque and mostly flat colour: an RGB PNG, each row "up" filtered (as its
difference from the row above: flat areas and horizontal lines become zeros), at a low
zlib level, is written in about 4 ms, where PIL took 6 to 8 ms for files of about the same
size (3% larger). Read back by any PNG reader (tested with PIL) as the pixels given.

Touches: nothing.
"""

from __future__ import annotations

import functools
import struct
import zlib

import numpy as np

__all__ = ["png_bytes"]

#: zlib's level for the PNGs: level 2 compresses the charts (mostly flat colour, "up"
#: filtered) in half the time of level 6, for files a fifth larger (25 to 40 kB).
_PNG_LEVEL = 2
#: PNG's "up" filter (each row as its difference from the row above): flat areas and
#: horizontal lines become zeros, at the cost of one numpy subtraction.
_PNG_UP = 2


def png_bytes(pixels: np.ndarray) -> bytes:
    """An RGB PNG of ``pixels`` (height x width x RGB or RGBA, 8 bits; alpha dropped:
    the charts are opaque), "up" filtered, at zlib level :data:`_PNG_LEVEL`."""
    height, width = pixels.shape[:2]
    rows = np.empty((height, width * 3 + 1), np.uint8)  # each row: its filter, its pixels
    rows[:, 0] = _PNG_UP
    row_bytes = pixels.reshape(height, -1)  # a view of the canvas buffer
    rgb = np.take(row_bytes, _rgb_bytes(width, pixels.shape[2]), axis=1)  # contiguous
    rows[0, 1:] = rgb[0]
    np.subtract(rgb[1:], rgb[:-1], out=rows[1:, 1:])  # modulo 256, as PNG's filter
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, RGB
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(rows.data, _PNG_LEVEL)),
            _png_chunk(b"IEND", b""),
        ]
    )


@functools.cache
def _rgb_bytes(width: int, channels: int) -> np.ndarray:
    """Where a row of ``width`` pixels of ``channels`` bytes has its R, G and B bytes
    (taking them so is twice as fast as copying the pixels' first three channels)."""
    return np.arange(width * channels).reshape(width, channels)[:, :3].ravel()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

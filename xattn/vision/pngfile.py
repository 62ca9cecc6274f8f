"""A PNG image from an upload: its size read from the header before a pixel is decoded.

``png_size(data)`` checks the 8-byte signature and the ``IHDR`` chunk (width, height, bit depth,
colour type) and refuses, in one line, a file larger than ``MAX_PNG_BYTES`` or an image of more
than ``MAX_PNG_PIXELS`` pixels, before anything is decompressed (a "PNG bomb" of a few kB can
declare gigapixels). ``read_png`` then decodes it with Pillow, as RGB uint8.
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np

__all__ = ["MAX_PNG_BYTES", "MAX_PNG_PIXELS", "png_size", "read_png", "png_bytes"]

MAX_PNG_BYTES = 5_000_000
MAX_PNG_PIXELS = 4_000_000          # 2000 x 2000
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def png_size(data: bytes, *, max_bytes: int = MAX_PNG_BYTES,
             max_pixels: int = MAX_PNG_PIXELS) -> tuple[int, int]:
    """(width, height) from a PNG file's header, checked; nothing is decompressed.

    Raises
    ------
    TypeError
        ``data`` is not bytes.
    ValueError
        Too large, not a PNG, a damaged header, or too many pixels (said in one line).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"a PNG file must be bytes; received {type(data).__name__}.")
    data = bytes(data)
    if len(data) > max_bytes:
        raise ValueError(f"the PNG file holds {len(data):,} bytes; at most {max_bytes:,} are "
                         f"read.")
    if data[:8] != _SIGNATURE:
        raise ValueError("this is not a PNG file: it must start with the PNG signature "
                         "(JPEG, GIF and WebP are not read; save the image as PNG).")
    if len(data) < 33 or data[12:16] != b"IHDR" or struct.unpack_from(">I", data, 8)[0] != 13:
        raise ValueError("the PNG file's first chunk is not a 13-byte IHDR: it is damaged.")
    if zlib.crc32(data[12:29]) != struct.unpack_from(">I", data, 29)[0]:
        raise ValueError("the PNG file's IHDR checksum is wrong: it is damaged.")
    width, height, depth, colour = struct.unpack_from(">IIBB", data, 16)
    if colour not in _DEPTHS or depth not in _DEPTHS[colour]:
        raise ValueError(f"the PNG file says colour type {colour} with bit depth {depth}, "
                         f"which PNG does not allow: it is damaged.")
    if width == 0 or height == 0 or width * height > max_pixels:
        raise ValueError(f"the image is {width} × {height} pixels; 1 to {max_pixels:,} "
                         f"pixels are read. Scale it down first.")
    return width, height


def read_png(data: bytes, *, max_bytes: int = MAX_PNG_BYTES,
             max_pixels: int = MAX_PNG_PIXELS) -> np.ndarray:
    """A PNG file as (height, width, 3) uint8 RGB (transparency on white); the header checked
    first (``png_size``, whose errors it raises), then decoded by Pillow."""
    width, height = png_size(data, max_bytes=max_bytes, max_pixels=max_pixels)
    from PIL import Image

    try:
        with Image.open(io.BytesIO(bytes(data)), formats=["PNG"]) as im:
            if im.size != (width, height):
                raise ValueError(f"the PNG file's header says {width} × {height} but Pillow "
                                 f"reads {im.size[0]} × {im.size[1]}.")
            im = im.convert("RGBA")
            white = Image.new("RGBA", im.size, (255, 255, 255, 255))
            return np.asarray(Image.alpha_composite(white, im).convert("RGB"), np.uint8)
    except (OSError, SyntaxError) as err:
        raise ValueError(f"the PNG file cannot be decoded: {str(err)[:160]}") from None


def png_bytes(image) -> bytes:
    """(height, width, 3) uint8 as a PNG file."""
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(np.asarray(image, np.uint8)).save(out, format="PNG")
    return out.getvalue()

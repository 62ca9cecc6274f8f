"""A built-in image, drawn in code (no file, no download): a word rendered with Pillow's own
font, with each character's box known, for the page's image example::

    word = rendered_word("cat")
    word.image              # (64, 192, 3) uint8, black on white
    word.boxes[2]           # the "t": (x0, y0, x1, y1) in pixels

Not ``xattn.vision.glyphs.render_word`` on purpose: that draws capitals of a 5 x 7 bitmap font,
the toy reader's own, which a real reader (TrOCR, trained on printed and written text) has not
seen; this draws any printable text in a real font. Both give a ``glyphs.WordImage``.
"""

from __future__ import annotations

import numpy as np

from xattn.vision.glyphs import Glyph, WordImage

__all__ = ["rendered_word", "EXAMPLE_WORD"]

EXAMPLE_WORD = "cat"
MAX_CHARS = 24


def rendered_word(text: str = EXAMPLE_WORD, *, height: int = 64, size: int = 40) -> WordImage:
    """``text`` drawn black on white in Pillow's built-in font, the image as wide as it needs
    (a multiple of ``height``), the word centred.

    Raises
    ------
    TypeError
        ``text`` is not a string.
    ValueError
        Empty, longer than ``MAX_CHARS`` characters, or with characters other than printable
        ASCII.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string; received {type(text).__name__}.")
    if not 1 <= len(text) <= MAX_CHARS or not all(32 <= ord(c) < 127 for c in text) \
            or not text.strip():
        raise ValueError(f"text must be 1 to {MAX_CHARS} printable ASCII characters; "
                         f"received {text!r}.")
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=size)
    left, top, right, bottom = font.getbbox(text)
    width = height * max(1, -(-(right - left + height // 2) // height))
    x, y = (width - (right - left)) // 2 - left, (height - (bottom - top)) // 2 - top
    im = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(im)
    draw.text((x, y), text, fill="black", font=font)
    glyphs = []
    for i, c in enumerate(text):
        start = font.getlength(text[:i])
        b = font.getbbox(c)
        glyphs.append(Glyph(c, (int(x + start + b[0]), int(y + b[1]), int(x + start + b[2]),
                                int(y + b[3]))))
    return WordImage(np.asarray(im, np.uint8), tuple(glyphs))

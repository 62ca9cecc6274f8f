"""Rendered words with every letter's box known, and how well a head reads them: the share of
characters whose cross-attention peak falls on their own glyph.

``render_word`` draws a word in capitals with a 5 x 7 bitmap font (below, drawn in NumPy: the
same pixels on every machine, no font files), each dot ``scale`` pixels wide, dark ink on a
light page, at a given place; ``word_image`` draws one at random (letters, place, scale,
shades, noise). ``Glyph.box`` is where its ink may be: (x0, y0, x1, y1), x1 and y1 excluded.
``WordImage`` is also what ``xattn.vision.example.rendered_word`` returns (the page's example for
any model, in Pillow's font: why it is not this one is said there).

``glyph_counts`` scores heads: the row that *produces* character i (teacher-forced or greedy)
peaks at an encoder position; that position's pixel box (``VisionEncoderDecoder.boxes``) is
*on* character i's glyph when, of all the word's glyph boxes, i's overlaps it most (a CLS or
distillation position, or a patch on no glyph, is on none).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int, shape_text

__all__ = ["LETTERS", "FONT", "Glyph", "WordImage", "render_word", "word_image",
           "glyph_of_box", "glyph_counts"]

_ROWS = {   # 5 x 7 capitals, 7 rows of 5 dots each: '#' ink
    "A": ".###.#...##...#######...##...##...#", "B": "####.#...##...#####.#...##...#####.",
    "C": ".###.#...##....#....#....#...#.###.", "D": "####.#...##...##...##...##...#####.",
    "E": "######....#....####.#....#....#####", "F": "######....#....####.#....#....#....",
    "G": ".###.#...##....#.####...##...#.####", "H": "#...##...##...#######...##...##...#",
    "I": ".###...#....#....#....#....#...###.", "J": "..###...#....#....#....#.#..#..##..",
    "K": "#...##..#.#.#..##...#.#..#..#.#...#", "L": "#....#....#....#....#....#....#####",
    "M": "#...###.###.#.##.#.##...##...##...#", "N": "#...##...###..##.#.##..###...##...#",
    "O": ".###.#...##...##...##...##...#.###.", "P": "####.#...##...#####.#....#....#....",
    "Q": ".###.#...##...##...##.#.##..#..##.#", "R": "####.#...##...#####.#.#..#..#.#...#",
    "S": ".#####....#.....###.....#....#####.", "T": "#####..#....#....#....#....#....#..",
    "U": "#...##...##...##...##...##...#.###.", "V": "#...##...##...##...##...#.#.#...#..",
    "W": "#...##...##...##.#.##.#.##.#.#.#.#.", "X": "#...##...#.#.#...#...#.#.#...##...#",
    "Y": "#...##...#.#.#...#....#....#....#..", "Z": "#####....#...#...#...#...#....#####",
}
LETTERS = "".join(sorted(_ROWS))
FONT = {ch: np.array([c == "#" for c in dots]).reshape(7, 5)   # (7, 5) bool
        for ch, dots in _ROWS.items()}
_ADVANCE = 6                   # dots from one letter's left edge to the next's


@dataclass(frozen=True)
class Glyph:
    """One drawn letter: the character and its box (x0, y0, x1, y1) in pixels."""

    char: str
    box: tuple[int, int, int, int]


@dataclass(frozen=True, eq=False)
class WordImage:
    """A rendered word: ``image`` (height, width, 3) uint8 and its glyphs, left to right."""

    image: np.ndarray
    glyphs: tuple[Glyph, ...]

    @property
    def text(self) -> str:
        return "".join(g.char for g in self.glyphs)

    @property
    def boxes(self) -> tuple[tuple[int, int, int, int], ...]:
        """Each glyph's box (x0, y0, x1, y1), in the order of ``text``."""
        return tuple(g.box for g in self.glyphs)

    def __repr__(self) -> str:
        return f"WordImage({self.text!r}, {self.image.shape[1]}x{self.image.shape[0]})"


def render_word(word: str, size: tuple[int, int], at: tuple[int, int], *, scale: int = 2,
                ink: int = 20, page: int = 235) -> WordImage:
    """``word`` (capitals of ``LETTERS``) drawn on a ``size`` (height, width) page with its
    top-left dot at ``at`` (x, y).

    Raises
    ------
    ValueError
        A character outside ``LETTERS``, or a word that does not fit the page there.
    """
    height, width = size
    check_int(scale, "scale", minimum=1, maximum=16)
    bad = sorted(set(word) - set(LETTERS))
    if not word or bad:
        raise ValueError(f"word must be capitals A-Z, at least one; received {word!r}"
                         + (f" (not drawable: {''.join(bad)!r})" if bad else "") + ".")
    x, y = at
    x1, y1 = x + scale * (_ADVANCE * len(word) - 1), y + 7 * scale
    if x < 0 or y < 0 or x1 > width or y1 > height:
        raise ValueError(f"{word!r} at scale {scale} needs ({x}, {y}) to ({x1}, {y1}); the "
                         f"page is {width} x {height}.")
    gray = np.full((height, width), page, np.uint8)
    glyphs = []
    for k, ch in enumerate(word):
        left = x + k * _ADVANCE * scale
        dots = np.kron(FONT[ch], np.ones((scale, scale), bool))         # (7s, 5s)
        gray[y:y + 7 * scale, left:left + 5 * scale][dots] = ink
        glyphs.append(Glyph(ch, (left, y, left + 5 * scale, y + 7 * scale)))
    return WordImage(np.repeat(gray[:, :, None], 3, axis=2), tuple(glyphs))


def word_image(rng: np.random.Generator, size: tuple[int, int] = (32, 128), *,
               lengths: tuple[int, int] = (3, 6), scales: tuple[int, ...] = (2, 3),
               max_left: int | None = None, max_top: int | None = None,
               lines: int = 1) -> WordImage:
    """A random word (``lengths`` letters, inclusive) at a random scale that fits, placement,
    ink and page shades, with Gaussian noise (sigma 0 to 12 levels); glyph boxes unchanged.

    Placement: the page is ``lines`` bands of equal height, the word in one of them drawn at
    random, its left edge at most ``max_left`` pixels in and its top at most ``max_top``
    below the band's top (anywhere it fits, where None)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; received "
                        f"{type(rng).__name__}. Build one with np.random.default_rng(seed).")
    height, width = size
    check_int(lines, "lines", minimum=1, maximum=height)
    band = height // lines
    n = int(rng.integers(lengths[0], lengths[1] + 1))
    word = "".join(LETTERS[i] for i in rng.integers(0, len(LETTERS), n))
    fits = [s for s in scales if s * (_ADVANCE * n - 1) <= width and 7 * s <= band]
    if not fits:
        raise ValueError(f"no scale of {scales} fits {n} letters on {width} x {height} in "
                         f"{lines} line(s).")
    scale = int(rng.choice(fits))
    slack = width - scale * (_ADVANCE * n - 1)
    x = int(rng.integers(0, (slack if max_left is None else min(slack, max_left)) + 1))
    y = band * int(rng.integers(0, lines)) + int(rng.integers(
        0, (band - 7 * scale if max_top is None else min(band - 7 * scale, max_top)) + 1))
    ink, page = int(rng.integers(0, 90)), int(rng.integers(170, 256))
    drawn = render_word(word, size, (x, y), scale=scale, ink=ink, page=page)
    noisy = drawn.image + rng.normal(0, rng.uniform(0, 12), (height, width, 1))
    return WordImage(np.clip(np.round(noisy), 0, 255).astype(np.uint8), drawn.glyphs)


def glyph_of_box(box, glyphs) -> int | None:
    """Index of the glyph whose box overlaps ``box`` (x0, y0, x1, y1) most, None on none
    (``box`` None: a CLS or distillation position)."""
    if box is None:
        return None
    x0, y0, x1, y1 = box
    areas = [max(0, min(x1, g.box[2]) - max(x0, g.box[0])) *
             max(0, min(y1, g.box[3]) - max(y0, g.box[1])) for g in glyphs]
    return int(np.argmax(areas)) if max(areas, default=0) > 0 else None


def glyph_counts(cross_attentions, boxes, glyphs) -> np.ndarray:
    """Characters whose row peaks on their own glyph, (n_layers, n_heads), for one image.

    Parameters
    ----------
    cross_attentions : ndarray of shape (n_layers, n_heads, n_tgt, n_src)
        Row i: the step that produces character i (rows beyond the glyphs, e.g. ``</s>``,
        are not read).
    boxes : list of n_src boxes or None
        ``VisionEncoderDecoder.boxes(image.shape)``.
    glyphs : sequence of Glyph
    """
    a = np.asarray(cross_attentions)
    if a.ndim != 4 or a.shape[2] < len(glyphs) or a.shape[3] != len(boxes):
        raise ValueError(f"cross_attentions must be (n_layers, n_heads, n_tgt >= "
                         f"{len(glyphs)}, n_src = {len(boxes)}); received {shape_text(a)}.")
    owner = np.array([-1 if (g := glyph_of_box(b, glyphs)) is None else g for b in boxes])
    peaks = np.argmax(a[:, :, :len(glyphs)], axis=-1)                   # (L, H, n_glyphs)
    return (owner[peaks] == np.arange(len(glyphs))).sum(-1)

"""xattn.vision.glyphs: words drawn with every letter's box known, and heads scored on whether
their peak falls on the letter they write (against plain loops)."""

import numpy as np
import pytest

from xattn.vision import patch_boxes
from xattn.vision.glyphs import (
    FONT,
    LETTERS,
    Glyph,
    glyph_counts,
    glyph_of_box,
    render_word,
    word_image,
)


def test_the_font_has_every_capital_each_drawn_differently():
    assert LETTERS == "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    shapes = {FONT[ch].tobytes() for ch in LETTERS}
    assert len(shapes) == 26 and all(FONT[ch].shape == (7, 5) and FONT[ch].any()
                                     for ch in LETTERS)


@pytest.mark.parametrize("scale", [1, 2, 3])
def test_ink_lies_exactly_in_the_glyph_boxes(scale):
    """Every inked pixel is inside its letter's box, each box holds its letter's dots scaled,
    and nothing else on the page is ink."""
    w = render_word("QUIZ", (32, 128), (5, 3), scale=scale, ink=10, page=240)
    gray = w.image[:, :, 0]
    assert w.image.shape == (32, 128, 3) and w.text == "QUIZ"
    assert w.boxes == tuple(g.box for g in w.glyphs) and len(w.boxes) == 4
    inked = gray == 10
    covered = np.zeros_like(inked)
    for g in w.glyphs:
        x0, y0, x1, y1 = g.box
        assert (x1 - x0, y1 - y0) == (5 * scale, 7 * scale)
        want = np.kron(FONT[g.char], np.ones((scale, scale), bool))
        np.testing.assert_array_equal(inked[y0:y1, x0:x1], want)
        covered[y0:y1, x0:x1] = True
    assert not inked[~covered].any()
    assert set(np.unique(gray)) == {10, 240}


def test_words_that_do_not_fit_or_cannot_be_drawn_are_refused():
    with pytest.raises(ValueError, match="not drawable: 'at'"):
        render_word("Cat", (32, 128), (0, 0))
    with pytest.raises(ValueError, match="capitals A-Z, at least one"):
        render_word("", (32, 128), (0, 0))
    with pytest.raises(ValueError, match="the page is 128 x 32"):
        render_word("ABCDEFGHIJK", (32, 128), (0, 0), scale=2)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        word_image(3)


def test_random_words_are_reproducible_and_keep_their_boxes_on_the_page():
    a = [word_image(np.random.default_rng(4)) for _ in range(2)]
    assert np.array_equal(a[0].image, a[1].image) and a[0].glyphs == a[1].glyphs
    rng = np.random.default_rng(0)
    for _ in range(50):
        w = word_image(rng)
        assert 3 <= len(w.glyphs) <= 6 and set(w.text) <= set(LETTERS)
        for g in w.glyphs:
            x0, y0, x1, y1 = g.box
            assert 0 <= x0 < x1 <= 128 and 0 <= y0 < y1 <= 32
            assert w.image[y0:y1, x0:x1].min() < w.image.max()     # ink darker than the page
        lefts = [g.box[0] for g in w.glyphs]
        assert lefts == sorted(lefts)


def test_placement_bounds_put_the_word_on_a_line_near_its_left_edge():
    rng = np.random.default_rng(2)
    tops = set()
    for _ in range(60):
        w = word_image(rng, (32, 96), lengths=(3, 6), scales=(2,), max_left=2, max_top=2,
                       lines=2)
        x0, y0 = w.glyphs[0].box[:2]
        assert x0 <= 2 and (y0 <= 2 or 16 <= y0 <= 18)
        tops.add(y0 >= 16)
        assert [g.box[0] - x0 for g in w.glyphs] == [12 * k for k in range(len(w.glyphs))]
    assert tops == {False, True}
    with pytest.raises(ValueError, match="in 4 line"):
        word_image(rng, (32, 96), scales=(3,), lines=4)


def test_a_box_belongs_to_the_glyph_it_overlaps_most():
    glyphs = (Glyph("A", (0, 0, 10, 14)), Glyph("B", (12, 0, 22, 14)))
    assert glyph_of_box((8, 0, 16, 8), glyphs) == 1       # 2 columns of A, 4 of B
    assert glyph_of_box((0, 0, 8, 8), glyphs) == 0
    assert glyph_of_box((10, 0, 12, 8), glyphs) is None     # the gap between them
    assert glyph_of_box(None, glyphs) is None               # CLS


def test_glyph_counts_equal_a_plain_loop():
    rng = np.random.default_rng(1)
    boxes = patch_boxes((32, 128), (4, 16))                 # CLS and 64 patches of 8 x 8
    for _ in range(10):
        w = word_image(rng)
        a = rng.dirichlet(np.ones(len(boxes)) * 0.2, (2, 3, len(w.glyphs) + 1))
        got = glyph_counts(a, boxes, w.glyphs)
        want = np.zeros((2, 3), int)
        for layer in range(2):
            for head in range(3):
                for i in range(len(w.glyphs)):
                    box = boxes[int(np.argmax(a[layer, head, i]))]
                    if box is None:
                        continue
                    overlap = [max(0, min(box[2], h.box[2]) - max(box[0], h.box[0])) *
                               max(0, min(box[3], h.box[3]) - max(box[1], h.box[1]))
                               for h in w.glyphs]
                    want[layer, head] += max(overlap) > 0 and int(np.argmax(overlap)) == i
        np.testing.assert_array_equal(got, want)


def test_a_head_looking_at_each_letter_gets_them_all_and_one_looking_at_cls_none():
    w = render_word("ABC", (32, 128), (0, 0), scale=2)     # letters at x 0-10, 12-22, 24-34
    boxes = patch_boxes((32, 128), (4, 16))
    a = np.zeros((1, 2, 4, len(boxes)))
    for i, x in enumerate((0, 16, 24)):                     # the patch starting at column x
        a[0, 0, i, 1 + x // 8] = 1.0
    a[0, 1, :, 0] = 1.0
    np.testing.assert_array_equal(glyph_counts(a, boxes, w.glyphs), [[3, 0]])
    with pytest.raises(ValueError, match="n_src = 65"):
        glyph_counts(a[..., :10], boxes, w.glyphs)

"""Speech and image models as the views' Attention (xattn.media): rows the tokens produced,
columns the clip's moments or the image's patches, consistent with each layer's trace, heads
switched off and decoding; the overlays and the glyph score (xattn.figures.media)."""

from __future__ import annotations

import numpy as np
import pytest

from xattn.figures.media import glyph_hits, overlay_mosaic
from xattn.media import image_attention, load_media, media_kind, speech_attention
from xattn.speech.example import tone_clip
from xattn.vision.example import rendered_word


@pytest.fixture(scope="module")
def speech(whisper_dir):
    clip = tone_clip()
    return speech_attention(load_media(whisper_dir, allowed=[whisper_dir]), clip.samples,
                            words=clip.words)


@pytest.fixture(scope="module")
def image(vision_dir):
    word = rendered_word()
    return image_attention(load_media(vision_dir, allowed=[vision_dir]), word.image,
                           char_boxes=word.boxes)


def test_folders_are_recognised_by_their_config(whisper_dir, vision_dir, tiny_dir, tmp_path):
    assert media_kind(whisper_dir) == "audio" and media_kind(vision_dir) == "image"
    assert media_kind(tiny_dir) is None and media_kind(str(tmp_path / "none")) is None
    (tmp_path / "config.json").write_text("{not json")
    assert media_kind(str(tmp_path)) is None
    with pytest.raises(ValueError, match="not allowed|allow"):
        load_media(whisper_dir, allowed=["elsewhere"])


def test_the_clip_s_columns_are_its_moments_and_rows_sum_to_one(speech):
    n = int(np.ceil(tone_clip().seconds / 0.02))
    assert speech.src_tokens[:3] == ("0.00s", "0.02s", "0.04s") and len(speech.src_tokens) == n
    assert np.allclose(speech.weights.sum(axis=-1), 1, atol=1e-5)
    m = speech.media
    assert m.spectrogram.shape == (80, 2 * n)
    assert m.padding.shape == speech.weights.shape[:3] and (m.padding >= 0).all()


def test_the_trace_and_the_ablation_are_the_rows_on_screen(speech, image):
    for a, cut in ((speech, len(speech.src_tokens)), (image, None)):
        for layer in range(a.n_layers):
            w = a.layers.trace(layer, True).weights[..., :cut]           # (H, T, S)
            w = w / w.sum(axis=-1, keepdims=True)
            assert np.allclose(w, a.weights[layer], atol=1e-4), (a, layer)
        result = a.layers.ablate(0, (1,))
        assert result.per_head.shape == (a.n_heads,) and result.heads_off == (1,)


def test_decoding_step_by_step_repeats_the_rows_and_takes_a_forced_token(speech, image):
    for a in (speech, image):
        d = a.translation.decoder(())
        assert d.tokens == a.tgt_tokens
        assert np.allclose(d.rows.transpose(1, 2, 0, 3), a.weights, atol=1e-4)
        token = next(t for t in d.top[1][1:] if t[0] != d.tokens[1])[0]
        forced = a.translation.decoder(((1, token),))
        assert forced.tokens[1] == token and forced.forced[:2] == (False, True)
        assert forced.tokens[0] == d.tokens[0]          # decoded again: step 0 as before
        assert np.allclose(forced.rows[:2], d.rows[:2], atol=1e-4)     # reads the same so far
        assert forced.probability[0] == pytest.approx(d.probability[0], abs=1e-5)
        with pytest.raises(ValueError, match="not a token of this model"):
            a.translation.decoder(((0, "no-such-piece"),))


def test_the_overlay_is_brightest_on_the_patch_a_head_looks_at(image):
    m = image.media
    w = np.zeros((1, 1, len(image.src_tokens)))
    w[0, 0, 6] = 1.0                                     # patch r2c2 of the 4 x 4 grid
    mosaic = overlay_mosaic(m.image, m.boxes, w, [0], tile_height=64)
    tile = mosaic[:64, :128].astype(int)
    redness = tile[..., 0] - tile[..., 2]
    y, x = np.unravel_index(np.argmax(redness), redness.shape)
    x0, y0, x1, y1 = m.boxes[6]                          # in the 128 x 64 image, scale 1
    assert x0 <= x < x1 and y0 <= y < y1


def test_glyph_hits_count_the_characters_a_head_finds(image):
    m = image.media
    n_src = len(image.src_tokens)
    centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in m.char_boxes]

    def patch_at(x, y):
        return next(j for j, b in enumerate(m.boxes) if b is not None and
                    b[0] <= x < b[2] and b[1] <= y < b[3])
    w = np.zeros((1, 2, 3, n_src))
    for k, (x, y) in enumerate(centres):
        w[0, 0, k, patch_at(x, y)] = 1.0                 # head 1: on each character
        w[0, 1, k, 1] = 1.0                              # head 2: the top-left patch always
    hits = glyph_hits(w, m.boxes, m.char_boxes, [0, 1, 2])
    assert hits[0, 0] == 1.0 and hits[0, 1] == 0.0


def test_the_rows_are_those_of_the_library_s_greedy_transcription(whisper_dir, speech):
    from xattn.speech import Whisper, greedy

    model = Whisper.from_folder(whisper_dir)
    run = greedy(model, model.features(tone_clip().samples), max_new_tokens=32)
    n = len(speech.src_tokens)
    rows = run.cross_attentions[..., :n]
    assert len(speech.tgt_tokens) == len(run.tokens)
    assert np.allclose(rows / rows.sum(axis=-1, keepdims=True), speech.weights, atol=1e-5)


def test_the_image_rows_are_those_of_the_library_s_decoding(vision_dir, image):
    from xattn.vision import VisionEncoderDecoder, decode

    model = VisionEncoderDecoder.from_folder(vision_dir)
    run = decode(model, model.pixel_values(rendered_word().image), max_new_tokens=32)
    assert len(image.tgt_tokens) == len(run.tgt_ids)
    assert np.allclose(run.cross_attention, image.weights, atol=1e-6)


def test_a_cache_counts_the_encoder_output_the_views_reuse(speech, image):
    from xattn.cache import nbytes

    for a in (speech, image):
        enc = a.media.encoder_output
        assert enc is not None and nbytes(a) > enc.nbytes + a.weights.nbytes


def test_the_labels_are_said_in_the_pages_language(speech, image):
    """The label stays English on the record (`label`) and is kept as its sentences
    (`said`), which a French or Arabic page says with the same numbers."""
    from xattn import words
    from xattn.sources import said_text

    assert speech.label.endswith("Rows: the tokens it wrote; columns: moments of the clip.")
    assert ": a speech model (Whisper) run in NumPy, hearing the built-in example (" in \
        speech.label
    assert ": an image-to-text model (VisionEncoderDecoder) run in NumPy, reading the " \
           "built-in example (" in image.label
    for a in (speech, image):
        with words.speaking("en"):
            assert " ".join(said_text(s) for s in a.said) == a.label
    with words.speaking("fr"):
        fr = " ".join(said_text(s) for s in speech.said)
    with words.speaking("ar"):
        ar = " ".join(said_text(s) for s in image.said)
    seconds = speech.label.split("(")[-1].split(" s)")[0]            # "2.00"
    assert "qui écoute l'exemple intégré (" + seconds.replace(".", ",") + "\u00a0s)" in fr
    assert fr.endswith("colonnes\u00a0: des instants du clip.")
    assert "يقرأ المثال المدمج (" in ar and ar.endswith("الأعمدة: مربعات من الصورة.")

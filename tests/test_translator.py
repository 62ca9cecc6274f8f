"""One interface for every translation model, one pipeline, one allow-list, one loader table.

A back end written here in a few lines (a `Translator` that "translates" by copying) goes
through the same `cross_attention` as the NumPy and torch models, and joins the loader with
one row of `xattn.backends.BACKENDS`.
"""

from dataclasses import replace

import numpy as np
import pytest

import xattn.backends
from xattn.backends import backend_for, load_translator, offered_models
from xattn.encdec import SHIPPED_MODEL, load_encdec
from xattn.media import SHIPPED_MEDIA
from xattn.translator import (
    MODELS_ENV,
    Translator,
    check_allowed,
    cross_attention,
    translate,
    word_level,
)


class Copier:
    """A back end in a few lines: pieces are characters' words split in two, the translation
    is the source, attention looks at the same position."""

    name, n_layers, n_heads, d_model, max_tokens = "copier", 2, 3, 8, 12
    specials = ("</s>",)
    trace_layer = switch_heads_off = query_inputs = decode_steps = effects = None
    rescalable = False

    def __init__(self):
        self.vocab = ["</s>"]

    def _id(self, piece):
        if piece not in self.vocab:
            self.vocab.append(piece)
        return self.vocab.index(piece)

    def tokenize(self, text, side="source"):
        pieces = []
        for word in text.split():
            pieces += ["▁" + word[:2], *([word[2:]] if word[2:] else [])]
        return [self._id(p) for p in pieces] + [0]

    def pieces(self, ids):
        return [self.vocab[i] for i in ids]

    def detokenize(self, ids):
        return "".join(self.vocab[i] for i in ids if i).replace("▁", " ").strip()

    def translate_ids(self, src_ids, max_new_tokens):
        return list(src_ids)[:max_new_tokens]

    def attention(self, src_ids, tgt_ids):
        eye = np.eye(len(tgt_ids), len(src_ids), dtype=np.float32)
        eye[eye.sum(-1) == 0, -1] = 1
        return np.broadcast_to(eye, (2, 3, *eye.shape)).copy()


def test_a_back_end_of_a_few_lines_goes_through_the_one_pipeline():
    model = Copier()
    assert isinstance(model, Translator)
    pieces = cross_attention(model, "unbelievable cats", words=False)
    assert pieces.translated and pieces.tgt_text == "unbelievable cats"
    assert pieces.src_pieces == ("▁un", "believable", "▁ca", "ts", "</s>")
    words = cross_attention(model, "unbelievable cats", "the cats")
    assert words.src_tokens == ("unbelievable", "cats", "</s>")
    assert words.tgt_tokens == ("the", "cats", "</s>") and not words.translated
    assert words.weights.shape == (2, 3, 3, 3)
    np.testing.assert_allclose(words.weights.sum(-1), 1.0)
    np.testing.assert_allclose(word_level(model, model.attention(words.src_ids, words.tgt_ids),
                                          words.src_ids, words.tgt_ids), words.weights)
    assert translate(model, "a b c") == "a b c"
    with pytest.raises(ValueError, match=r"The source has 13 pieces; copier reads at most 12"):
        cross_attention(model, "a " * 12)


def test_what_is_not_a_translator_is_refused_by_name():
    with pytest.raises(TypeError, match=r"model must be a loaded translation model .*received "
                                        r"str"):
        cross_attention("Helsinki-NLP/opus-mt-en-fr", "x")


def test_both_back_ends_are_translators_with_their_capabilities(tiny_dir):
    from xattn.torch_models import load_model

    numpy = load_encdec()
    assert isinstance(numpy, Translator) and numpy.rescalable
    assert all(getattr(numpy, c) is not None for c in ("trace_layer", "switch_heads_off",
                                                        "query_inputs", "decode_steps",
                                                        "effects"))
    assert backend_for(tiny_dir).name == "numpy"     # a Marian folder runs in NumPy ...
    torch = load_model(tiny_dir, allowed=[tiny_dir])    # ... or through transformers
    assert isinstance(torch, Translator) and not torch.rescalable
    assert torch.trace_layer is not None and torch.switch_heads_off is not None
    assert torch.query_inputs is None and torch.decode_steps is None and torch.effects is None


def test_one_refusal_for_a_name_off_the_list(monkeypatch):
    monkeypatch.setenv(MODELS_ENV, "a/b, c")
    assert check_allowed("c") == "c" and check_allowed(SHIPPED_MODEL, always=(SHIPPED_MODEL,))
    message = (r"'x/y' is not on this server's list of models; allowed: toy-en-fr, a/b, c\. A "
               r"deployer sets the list with the environment variable XATTN_MODELS")
    for load in (load_translator, load_encdec):
        with pytest.raises(ValueError, match=message):
            load("x/y")
    with pytest.raises(TypeError, match=r"allowed must be a list of names, not one string"):
        check_allowed("x", "x")
    with pytest.raises(TypeError, match=r"name must be a string; received int"):
        load_translator(3)


def test_the_table_chooses_the_back_end(monkeypatch):
    assert backend_for(SHIPPED_MODEL).name == "numpy"
    numpy, torch = xattn.backends.BACKENDS
    assert backend_for("Helsinki-NLP/opus-mt-en-fr") is (torch if torch.missing() is None
                                                          else None)
    gone = replace(torch, missing=lambda: "torch is not installed")
    monkeypatch.setattr(xattn.backends, "BACKENDS", (numpy, gone))
    monkeypatch.setenv(MODELS_ENV, "Helsinki-NLP/opus-mt-en-fr")
    assert backend_for("Helsinki-NLP/opus-mt-en-fr") is None
    assert offered_models() == [SHIPPED_MODEL, *SHIPPED_MEDIA]


def test_a_new_back_end_is_one_row(monkeypatch):
    row = xattn.backends.Backend("copier", lambda name: name == "copier",
                                 lambda name, allowed=None: Copier(), lambda: None,
                                 downloads=False)
    monkeypatch.setattr(xattn.backends, "BACKENDS", (row, *xattn.backends.BACKENDS))
    monkeypatch.setenv(MODELS_ENV, "copier")
    assert offered_models() == [SHIPPED_MODEL, *SHIPPED_MEDIA, "copier"]
    model = load_translator("copier")
    assert cross_attention(model, "hello there").tgt_tokens == ("hello", "there", "</s>")

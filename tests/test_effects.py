"""What changes the next word (``xattn.encdec.effects``): each number re-derived by a separate pass.

Masking a source word: the library leaves its pieces out of every cross-attention's keys; the
reference here keeps them and masks them (``encoder_mask``) in a plain layer-by-layer loop of
the model's own parts, and, where transformers is installed, transformers' Marian does it
with an ``attention_mask`` on given encoder outputs. Heads off: ``EncoderDecoder.forward`` with a
``head_mask``. The logit lens: each layer's output of the plain loop through ``logits``.
"""

from __future__ import annotations

import numpy as np
import pytest

from xattn.encdec import SHIPPED_FOLDER, load_encdec
from xattn.encdec.effects import effects, log_probs, logit_lens
from xattn.encdec.layers import feed_forward, norm
from xattn.subwords import word_groups

SRC, TGT = "the red cat sees the dog", "le chat rouge voit le chien"


@pytest.fixture(scope="module")
def model():
    return load_encdec()


@pytest.fixture(scope="module")
def ids(model):
    return model.tokenizer.encode(SRC), model.tokenizer.encode(TGT, side="target")


def reference_layers(model, src_ids, tgt_ids, may_attend=None) -> list[np.ndarray]:
    """Every decoder layer's output by a plain loop of Marian's post-norm layers (the shipped
    model: no final norm): causal self-attention over the whole prefix, the cross-attention
    with ``may_attend`` (n_src,) as its mask."""
    enc = model.encode(src_ids)
    y = model.embed([model.config.decoder_start_token_id, *tgt_ids[:-1]], "decoder")
    causal = np.tril(np.ones((len(y), len(y)), bool))
    outs = []
    for layer in model.decoder_layers:
        h, _ = layer.self_attn(y, y, causal)
        y = norm(y + h, layer.self_attn_layer_norm)
        h, _ = layer.encoder_attn(y, enc, may_attend)
        y = norm(y + h, layer.encoder_attn_layer_norm)
        y = norm(y + feed_forward(y, layer, model.act), layer.final_layer_norm)
        outs.append(y)
    return outs


def word_p(model, h, tgt_ids, steps) -> float:
    lp = log_probs(model, h)
    return float(np.exp(sum(lp[t, tgt_ids[t]] for t in steps)))


@pytest.mark.parametrize("row", range(7))
def test_masking_each_source_word_matches_a_masked_pass(model, ids, row):
    src, tgt = ids
    e = effects(model, src, tgt, row)
    src_groups = word_groups(model.tokenizer.id_to_piece(src), specials=model.tokenizer.specials)
    tgt_groups = word_groups(model.tokenizer.id_to_piece(tgt), specials=model.tokenizer.specials)
    steps = np.flatnonzero(tgt_groups == row)
    full = word_p(model, reference_layers(model, src, tgt)[-1], tgt, steps)
    assert e.p == pytest.approx(full, abs=2e-5)
    for w in range(len(e.src_words)):
        h = reference_layers(model, src, tgt, may_attend=src_groups != w)[-1]
        assert e.masked[w] == pytest.approx(word_p(model, h, tgt, steps), abs=2e-5), (row, w)
    np.testing.assert_allclose(e.drop, e.p - e.masked)


def test_switching_heads_off_matches_the_model_s_head_mask(model, ids):
    src, tgt = ids
    e = effects(model, src, tgt, 1)                                      # chat
    for layer in range(model.n_layers):
        for h in range(model.n_heads):
            gates = np.ones((model.n_layers, model.n_heads), np.float32)
            gates[layer, h] = 0
            logits = model.forward(src, tgt, head_mask=gates).logits        # (T, V)
            z = logits[1].astype(np.float64)
            p = np.exp(z[tgt[1]] - z.max()) / np.exp(z - z.max()).sum()
            assert e.head_off[layer, h] == pytest.approx(p, abs=2e-5)


def test_the_shipped_model_disagrees_on_chat(model, ids):
    """The lesson's example: `chat` needs `cat` (masking it costs nearly everything) while
    the last layer's heads, averaged, look most at `</s>`, whose masking costs little."""
    e = effects(model, *ids, 1)
    assert e.tgt_words[1] == "chat" and e.src_words[int(np.argmax(e.drop))] == "cat"
    looked = int(np.argmax(e.attention[-1].mean(axis=0)))
    assert e.src_words[looked] == "</s>" and e.drop[looked] < 0.05 < 0.9 < e.drop.max()


def test_pieces_and_errors(model, ids):
    src, tgt = ids
    e = effects(model, src, tgt, 3, words=False)             # "▁" of "sees": pieces count
    assert e.src_words == tuple(model.tokenizer.id_to_piece(src))
    assert len(e.masked) == len(src)
    with pytest.raises(ValueError, match="row must be an int >= 0 and <= 6; received 9"):
        effects(model, src, tgt, 9)


def test_the_logit_lens_is_each_layer_through_the_output_projection(model, ids):
    src, tgt = ids
    lens = logit_lens(model, src, tgt, k=3)
    outs = reference_layers(model, src, tgt)
    for layer, h in enumerate(outs):
        p = np.exp(log_probs(model, h))                                     # (T, V)
        np.testing.assert_allclose(lens.chosen[layer], p[np.arange(len(tgt)), tgt], atol=2e-5)
        np.testing.assert_array_equal(lens.top_ids[layer, :, 0], p.argmax(-1))
    last = model.forward(src, tgt).logits.astype(np.float64)
    z = np.exp(last - last.max(-1, keepdims=True))
    np.testing.assert_allclose(lens.top_probs[-1, :, 0], (z / z.sum(-1, keepdims=True)).max(-1),
                               atol=2e-5)
    assert lens.top_tokens[-1, 1, 0] == "▁chat"
    assert (lens.chosen[-1] > 0.9).all()                         # the output decides every word


def test_masking_matches_transformers(model, ids):
    """transformers' Marian, given the encoder's output and an attention mask that hides one
    source piece from the decoder's cross-attention only."""
    from model_helpers import models_or_skip
    models_or_skip()
    import torch
    from transformers import MarianMTModel
    from transformers.modeling_outputs import BaseModelOutput

    src, tgt = ids
    reference = MarianMTModel.from_pretrained(str(SHIPPED_FOLDER),
                                              attn_implementation="eager").eval()
    e = effects(model, src, tgt, 2, words=False)                           # ▁rouge
    with torch.no_grad():
        enc = BaseModelOutput(last_hidden_state=reference.model.encoder(
            input_ids=torch.tensor([src])).last_hidden_state)
        start = torch.tensor([[model.config.decoder_start_token_id, *tgt[:2]]])
        for j in range(len(src)):
            mask = torch.ones(1, len(src), dtype=torch.long)
            mask[0, j] = 0
            logits = reference(encoder_outputs=enc, attention_mask=mask,
                               decoder_input_ids=start).logits[0, 2]
            p = float(torch.softmax(logits.double(), -1)[tgt[2]])
            assert e.masked[j] == pytest.approx(p, abs=5e-5), j


# ------------------------------------------------------------------ every family, against torch
FAMILIES = ("bart", "mbart", "m2m_100", "nllb", "t5")


@pytest.fixture(scope="module")
def family(family_dirs, request):
    """(our model, transformers' in float64) of a tiny random model of one family."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from xattn.encdec import EncoderDecoder

    folder = family_dirs(request.param)
    ref = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager")
    torch.set_num_threads(1)
    return EncoderDecoder.from_folder(folder), ref.double().eval()


def torch_head(ref, h, final_norm: bool):
    """transformers' output layer on decoder states ``h`` (1, T, d_model): the stack's final
    norm where it has one (mBART, M2M100, T5), T5's tied rescaling, the logits' bias (BART)."""
    decoder = ref.get_decoder()
    norm_ = getattr(decoder, "layer_norm", None) or getattr(decoder, "final_layer_norm", None)
    if final_norm and norm_ is not None:
        h = norm_(h)
    if ref.config.model_type == "t5" and ref.config.tie_word_embeddings:
        h = h * ref.config.d_model ** -0.5
    logits = ref.lm_head(h)
    bias = getattr(ref, "final_logits_bias", None)
    return (logits if bias is None else logits + bias)[0].numpy()


def softmax(z):
    z = np.exp(z - z.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


@pytest.mark.parametrize("family", FAMILIES, indirect=True)
def test_every_family_s_effects_and_lens_match_transformers(family):
    """Masking a source piece (transformers: an attention mask on given encoder outputs), and
    each decoder layer through the output layer (transformers' hidden states through its own
    head), in float64."""
    import torch
    from transformers.modeling_outputs import BaseModelOutput

    ours, ref = family
    src, tgt = ours.tokenize(SRC), ours.tokenize(TGT, "target")
    row = 2
    e = ours.effects(src, tgt, row, words=False)
    start = [ours.config.decoder_start_token_id, *tgt[:-1]]
    with torch.no_grad():
        enc = BaseModelOutput(last_hidden_state=ref.get_encoder()(
            input_ids=torch.tensor([src])).last_hidden_state)
        for j in range(len(src)):
            mask = torch.ones(1, len(src), dtype=torch.long)
            mask[0, j] = 0
            logits = ref(encoder_outputs=enc, attention_mask=mask,
                         decoder_input_ids=torch.tensor([start[:row + 1]])).logits[0, row]
            want = softmax(logits.numpy())[tgt[row]]       # random weights: p is small
            assert e.masked[j] == pytest.approx(want, rel=1e-4), j
        out = ref(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([start]),
                  output_hidden_states=True)
        states = out.decoder_hidden_states                     # embeddings, then each layer
        np.testing.assert_allclose(torch_head(ref, states[-1], False), out.logits[0].numpy(),
                                   atol=1e-9)                  # the head helper is transformers'
        lens = logit_lens(ours, src, tgt)
        for layer in range(ours.n_layers):
            last = layer == ours.n_layers - 1
            p = softmax(torch_head(ref, states[layer + 1], not last))           # (T, V)
            np.testing.assert_allclose(lens.chosen[layer], p[np.arange(len(tgt)), tgt],
                                       rtol=1e-4, err_msg=f"layer {layer}")
    assert e.p == pytest.approx(float(lens.chosen[-1, row]), rel=1e-5)
    assert np.ptp(e.masked) > 0.05 * e.p                  # masking changes something: a test


@pytest.mark.parametrize("family", FAMILIES, indirect=True)
def test_every_family_s_words_are_the_heatmap_s_columns(family):
    """Whole words (BART's pieces start with Ġ, the others' with ▁): the effects' words, and
    decoding's columns, are the teacher-forced heatmap's."""
    from xattn.translator import cross_attention

    ours, _ = family
    a = cross_attention(ours, SRC, TGT)
    e = ours.effects(a.src_ids, a.tgt_ids, 1)
    assert e.src_words == a.src_tokens and e.tgt_words == a.tgt_tokens
    d = ours.decode_steps(a.src_ids, words=True)
    assert d.src_tokens == a.src_tokens and d.rows.shape[-1] == len(a.src_tokens)
    np.testing.assert_allclose(d.rows.sum(-1), 1, atol=1e-5)
    assert "".join(w for w, _, _ in d.words_so_far(d.n_steps - 1)).replace(" ", "") == \
        "".join(d.tokens).replace(d.marker, "").replace(" ", "")

"""Every family the NumPy encoder-decoder runs, against transformers on tiny random models.

BART, mBART-50, M2M100, NLLB and T5 (v1.0, and v1.1's gated feed-forward, narrower heads and
untied output layer), several shapes each (Marian's are in test_marian.py). Each model is built
from a config with random weights, saved with ``save_pretrained`` beside a tokenizer trained on
the toy corpus, and read back two ways: by transformers (``from_pretrained``, in float64: the
exact result) and by ``xattn.encdec`` from the same folder. The ids, the encoder output, every
layer's cross-attention, the logits and the greedy ids agree (1e-5 of each field's scale).
These tests need torch (``models_or_skip``: they fail instead where XATTN_REQUIRE_MODELS=1).
"""

import json

import numpy as np
import pytest
from model_helpers import models_or_skip

from xattn.encdec import EncoderDecoder, decode
from xattn.encdec.decode import start_tokens

SHAPES = {
    ("bart", "default"): dict(),
    ("bart", "scaled-relu"): dict(d_model=24, encoder_attention_heads=3, decoder_attention_heads=6,
                                  encoder_layers=3, activation_function="relu",
                                  scale_embedding=True),
    ("mbart", "default"): dict(scale_embedding=True),
    ("mbart", "one-layer"): dict(d_model=8, encoder_layers=1, decoder_layers=1,
                                 encoder_attention_heads=8, decoder_attention_heads=1,
                                 activation_function="gelu_new"),
    ("m2m_100", "default"): dict(),
    ("m2m_100", "unscaled-gelu"): dict(scale_embedding=False, activation_function="gelu",
                                       decoder_layers=3),
    ("nllb", "default"): dict(encoder_ffn_dim=48),
    ("t5", "v1.0"): dict(),
    ("t5", "v1.1-untied"): dict(feed_forward_proj="gated-gelu", d_kv=6, num_decoder_layers=3),
}
SPREAD = {"t5": 0.35}    # T5 adds its residuals unnormed: smaller weights, realistic sizes
PAIRS = [("unbelievable things happen every day", "le chat"),                 # S > T
         ("a bird", "où est la gare? elle est près de la rivière.")]          # S < T
SENTENCES = ["the red cat sees the dog", "Where is the station? It is near the river!",
             "le chat rouge voit le chien", "ünïcode    spaces\tand tabs"]


def untie(folder, spread: float) -> None:
    """T5 v1.1 as the Hub has it: an output layer of its own, ``tie_word_embeddings: false``
    (transformers 5 ties a fresh model's, so the folder is changed after saving)."""
    from safetensors.numpy import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    rng = np.random.default_rng(0)
    tensors["lm_head.weight"] = (rng.standard_normal(tensors["shared.weight"].shape)
                                 * spread).astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((folder / "config.json").read_text())
    config.pop("scale_decoder_outputs", None)
    config["tie_word_embeddings"] = False
    (folder / "config.json").write_text(json.dumps(config))


@pytest.fixture(scope="module", params=list(SHAPES), ids=lambda k: "-".join(k))
def models(request, tmp_path_factory):
    """(transformers tokenizer, transformers model from the folder in float64 and in float32,
    the NumPy model from the same folder)."""
    models_or_skip()
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from devtools.tiny_models import make_tokenizer, tiny_model
    torch.set_num_threads(1)
    family, shape = request.param
    spread = SPREAD.get(family, 0.6)
    root = tmp_path_factory.mktemp(f"{family}-{shape}")
    tokenizer = make_tokenizer(family, root / "tokenizer")
    folder = root / "model"
    tiny_model(family, tokenizer, seed=len(shape), spread=spread,
               **SHAPES[request.param]).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    if shape.endswith("untied"):
        untie(folder, spread)
    loaded = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager").eval()
    import copy
    return tokenizer, copy.deepcopy(loaded).double(), loaded, EncoderDecoder.from_folder(folder)


def ids(tokenizer, src, tgt):
    return list(tokenizer(src)["input_ids"]), list(tokenizer(text_target=tgt)["input_ids"])


def torch_pass(model, src_ids, tgt_ids, start):
    import torch

    with torch.no_grad():
        return model(input_ids=torch.tensor([src_ids]), output_attentions=True,
                     decoder_input_ids=torch.tensor([[start, *tgt_ids[:-1]]]))


def close(got, want, what):
    """Within 1e-5 of the field's scale (1 for attention weights)."""
    want = np.asarray(want, dtype=np.float64)
    np.testing.assert_allclose(got, want, rtol=0, err_msg=what,
                               atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_the_tokenizer_gives_transformers_ids(models):
    tokenizer, _, _, ours = models
    for text in SENTENCES:
        assert ours.tokenize(text) == list(tokenizer(text)["input_ids"]), text
        target = list(tokenizer(text_target=text)["input_ids"])
        assert ours.tokenize(text, "target") == target, text
        assert ours.pieces(target) == tokenizer.convert_ids_to_tokens(target)


@pytest.mark.parametrize("src,tgt", PAIRS)
def test_teacher_forcing_matches_transformers_float64(models, src, tgt):
    tokenizer, exact, _, ours = models
    src_ids, tgt_ids = ids(tokenizer, src, tgt)
    run = ours.forward(src_ids, tgt_ids)
    ref = torch_pass(exact, src_ids, tgt_ids, ours.config.decoder_start_token_id)
    cross = np.stack([a[0].numpy() for a in ref.cross_attentions])           # (L, H, T, S)
    assert run.cross_attention.shape == cross.shape == (
        ours.n_layers, ours.n_heads, len(tgt_ids), len(src_ids))
    close(run.encoder_output, ref.encoder_last_hidden_state[0], "encoder output")
    for layer in range(ours.n_layers):
        close(run.cross_attention[layer], cross[layer], f"cross-attention of layer {layer}")
    close(run.logits, ref.logits[0], "logits")
    assert np.ptp(cross, axis=-1).max() > 0.05     # rows far from uniform: a real comparison


@pytest.mark.parametrize("src", [s for s, _ in PAIRS])
def test_greedy_with_and_without_cache_equals_generate(models, src):
    import torch

    tokenizer, _, model, ours = models
    src_ids = list(tokenizer(src)["input_ids"])
    first = start_tokens(ours)
    with torch.no_grad():     # no cache: transformers 5.24 sizes T5's by the encoder's layers
        out = model.generate(input_ids=torch.tensor([src_ids]), num_beams=1, do_sample=False,
                             max_new_tokens=12, forced_eos_token_id=None, use_cache=False,
                             forced_bos_token_id=first[0] if first else None)
    want = out[0].tolist()[1:]                                # without the start token
    cached = decode(ours, src_ids, max_new_tokens=12)
    uncached = decode(ours, src_ids, max_new_tokens=12, use_cache=False)
    assert list(cached.tgt_ids) == list(uncached.tgt_ids) == want
    # float32 sums in another order (one row at a time, or all at once): a few 1e-7 apart
    np.testing.assert_allclose(cached.cross_attention, uncached.cross_attention, atol=5e-6)
    forced = ours.forward(src_ids, cached.tgt_ids)           # each step is its teacher row
    np.testing.assert_allclose(cached.cross_attention, forced.cross_attention, atol=5e-6)


def test_a_translation_starts_as_the_family_starts_it(models):
    tokenizer, _, _, ours = models
    family = ours.config.model_type
    first = start_tokens(ours)
    if ours.tokenizer.frame == "lang":        # the target language's code
        assert first == (tokenizer.convert_tokens_to_ids(ours.tokenizer.id_to_piece(first)[0]),)
        assert ours.pieces(first)[0] in ours.specials
        assert ours.tokenize("x", "target")[0] == first[0]
    else:
        assert first == () and family in ("bart", "t5")


def test_every_layer_opens_as_the_model_computes_it(models):
    """The layer's own MultiHeadCrossAttention, traced on what it read, gives the pass's
    weights; T5 does not divide by sqrt(d_head), so its trace cannot leave that out."""
    tokenizer, _, _, ours = models
    src_ids, tgt_ids = ids(tokenizer, *PAIRS[0])
    run = ours.forward(src_ids, tgt_ids)
    for layer in range(ours.n_layers):
        trace = ours.trace_layer(src_ids, tgt_ids, layer)
        np.testing.assert_allclose(trace.weights, run.cross_attention[layer], atol=1e-6)
        x, w_q, b_q = ours.query_inputs(src_ids, tgt_ids, layer)
        q = x @ w_q + (0 if b_q is None else b_q)                     # (T, h * d_head)
        heads = q.reshape(len(tgt_ids), ours.n_heads, -1).transpose(1, 0, 2)
        np.testing.assert_allclose(heads, trace.q, rtol=1e-5, atol=1e-5)
    t5 = ours.config.model_type == "t5"
    assert ours.rescalable is not t5 and (trace.scale == 1.0) is t5


def test_switching_heads_off_gates_the_real_layer(models):
    """Heads switched off before the output projection of the cross-attention change that
    layer's output and every later one, exactly as the same gate on transformers' does."""
    import torch

    tokenizer, exact, _, ours = models
    src_ids, tgt_ids = ids(tokenizer, *PAIRS[1])
    gates = np.ones((ours.n_layers, ours.n_heads), dtype=np.float32)
    gates[0, 0] = gates[-1, -1] = 0.0
    decoder = exact.get_decoder()
    t5 = ours.config.model_type == "t5"
    attn = [b.layer[1].EncDecAttention if t5 else b.encoder_attn
            for b in (decoder.block if t5 else decoder.layers)]

    def hook(layer):
        width = attn[layer].key_value_proj_dim if t5 else attn[layer].head_dim
        cols = torch.as_tensor(gates[layer], dtype=torch.float64).repeat_interleave(width)
        return lambda module, args: (args[0] * cols, *args[1:])

    out = [a.o if t5 else a.out_proj for a in attn]
    handles = [o.register_forward_pre_hook(hook(i)) for i, o in enumerate(out)]
    try:
        ref = torch_pass(exact, src_ids, tgt_ids, ours.config.decoder_start_token_id)
    finally:
        for h in handles:
            h.remove()
    gated = ours.forward(src_ids, tgt_ids, head_mask=gates)
    close(gated.logits, ref.logits[0], "gated logits")
    assert np.abs(gated.logits - ours.forward(src_ids, tgt_ids).logits).max() > 1e-3

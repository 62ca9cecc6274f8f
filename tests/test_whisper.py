"""Whisper in NumPy (``xattn.speech``) against transformers on tiny random models.

Each model is built from a ``WhisperConfig`` with random weights (``devtools.tiny_whisper``),
saved with ``save_pretrained`` (safetensors) and read back two ways: by transformers
(``from_pretrained``, eager attention, in float64 as the exact result and in float32 for
``generate``) and by ``Whisper.from_folder``. The encoder output, every layer's
``cross_attentions`` and the logits agree within 1e-5 of each field's scale; greedy tokens
equal ``generate``'s (suppressed tokens, forced prompt, ``<|notimestamps|>``, end of text),
from features and from audio through both front ends. Two shapes: a small one with
suppressed tokens; one with 128 mels, one decoder head, more decoder than encoder layers, a
forced prompt and an untied output layer. These tests need torch (``models_or_skip``: they
fail instead where XATTN_REQUIRE_MODELS=1).
"""

import json
import tracemalloc

import numpy as np
import pytest
from model_helpers import models_or_skip

from devtools.tiny_whisper import TINY
from xattn.speech import Whisper, greedy

SHAPES = {
    "small": dict(TINY),
    "mels128-one-head-forced": dict(
        vocab_size=90, d_model=24, encoder_layers=1, decoder_layers=3,
        encoder_attention_heads=2, decoder_attention_heads=1, encoder_ffn_dim=40,
        decoder_ffn_dim=40, num_mel_bins=128, max_source_positions=50,
        max_target_positions=30, decoder_start_token_id=85, pad_token_id=86, bos_token_id=86,
        eos_token_id=87, begin_suppress_tokens=None, suppress_tokens=None),
}
# As the Hub's multilingual checkpoints: the language detected, the task forced, timestamps off
FORCED = {"forced_decoder_ids": [[1, None], [2, 81]], "no_timestamps_token_id": 82,
          "lang_to_id": {"<|en|>": 70, "<|fr|>": 71, "<|de|>": 72},
          "task_to_id": {"transcribe": 81, "translate": 80}, "alignment_heads": [[2, 0], [1, 0]]}
SPREAD = 0.6      # peaked attention and varied tokens (transformers' init gives one token)


def untie(folder) -> None:
    """An output layer of its own (``tie_word_embeddings: false``), as a fine-tune may have."""
    from safetensors.numpy import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    rng = np.random.default_rng(5)
    tensors["proj_out.weight"] = (rng.standard_normal(
        tensors["model.decoder.embed_tokens.weight"].shape) * SPREAD).astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((folder / "config.json").read_text())
    config["tie_word_embeddings"] = False
    (folder / "config.json").write_text(json.dumps(config))


@pytest.fixture(scope="module", params=list(SHAPES))
def models(request, tmp_path_factory):
    """(transformers in float64, transformers in float32, NumPy, the folder)."""
    models_or_skip()
    import torch
    from transformers import WhisperForConditionalGeneration

    from devtools.tiny_whisper import save_whisper

    torch.set_num_threads(1)
    folder = save_whisper(tmp_path_factory.mktemp(request.param), seed=2, spread=SPREAD,
                          **SHAPES[request.param])
    if request.param.endswith("forced"):
        generation = json.loads((folder / "generation_config.json").read_text())
        generation.pop("_from_model_config", None)   # else transformers re-derives it
        (folder / "generation_config.json").write_text(json.dumps({**generation, **FORCED}))
        untie(folder)
    load = WhisperForConditionalGeneration.from_pretrained
    ref64 = load(folder, attn_implementation="eager").double().eval()
    ref32 = load(folder, attn_implementation="eager").eval()
    return ref64, ref32, Whisper.from_folder(folder), folder


def features_of(model, seed: int) -> np.ndarray:
    c = model.config
    return np.random.default_rng(seed).standard_normal((c.num_mel_bins, c.n_frames)) \
        .astype(np.float32)


def reference_pass(ref, features, ids):
    import torch

    with torch.no_grad():
        out = ref(input_features=torch.from_numpy(features)[None].to(ref.dtype),
                  decoder_input_ids=torch.tensor([ids]), output_attentions=True)
    return (out.encoder_last_hidden_state[0].numpy(), out.logits[0].numpy(),
            np.stack([a[0].numpy() for a in out.cross_attentions]))


def close(ours, exact, torch32, what):
    """Within 1e-5 of the field's scale of the float64 result, or within twice transformers'
    own float32 error where the weights make the scores large (peaked softmax rows)."""
    scale = float(np.abs(exact).max())
    tol = max(1e-5 * max(scale, 1.0), 2 * float(np.abs(torch32 - exact).max()))
    np.testing.assert_allclose(ours, exact, rtol=0, atol=tol, err_msg=what)


@pytest.mark.parametrize("seed", [0, 1])
def test_forward_equals_transformers(models, seed):
    ref64, ref32, model, _ = models
    features = features_of(model, seed)
    rng = np.random.default_rng(seed)
    ids = [model.config.decoder_start_token_id,
           *rng.integers(0, model.config.vocab_size, size=7).tolist()]
    exact, torch32 = reference_pass(ref64, features, ids), reference_pass(ref32, features, ids)
    run = model.forward(features, ids)
    assert run.cross_attentions.shape == (model.n_layers, model.n_heads, len(ids),
                                          model.config.max_source_positions)
    assert run.cross_attentions.dtype == run.logits.dtype == np.float32
    for i, (ours, what) in enumerate(((run.encoder_output, "encoder output"),
                                      (run.logits, "logits"),
                                      (run.cross_attentions, "cross_attentions"))):
        close(ours, exact[i], torch32[i], what)


def test_one_token(models):
    ref64, ref32, model, _ = models
    features = features_of(model, 3)
    ids = [model.config.decoder_start_token_id]
    exact, torch32 = reference_pass(ref64, features, ids), reference_pass(ref32, features, ids)
    run = model.forward(features, ids)
    close(run.logits, exact[1], torch32[1], "logits")
    close(run.cross_attentions, exact[2], torch32[2], "cross_attentions")


def generate(ref32, features, max_new_tokens, prompt):
    """The tokens ``generate`` produced after the prompt, end of text included (its plain
    output leaves the end of text out; the dict's ``sequences`` hold everything)."""
    import torch

    with torch.no_grad():
        out = ref32.generate(torch.from_numpy(features)[None], max_new_tokens=max_new_tokens,
                             return_timestamps=False, return_dict_in_generate=True)
    sequence = out.sequences[0].tolist()
    assert tuple(sequence[:len(prompt)]) == prompt
    return tuple(sequence[len(prompt):])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_equals_generate(models, seed):
    _, ref32, model, _ = models
    features = features_of(model, seed)
    n = model.config.max_target_positions - len(model.generation.prompt(language=0))
    done = greedy(model, features, max_new_tokens=n)
    assert done.tokens == generate(ref32, features, n, done.prompt)
    assert done.finished == (done.tokens[-1] == model.generation.eos_token_id)


def test_the_models_say_varied_things(models):
    """A test of decoding that can fail: the random weights give several tokens, not one."""
    _, _, model, _ = models
    said = [greedy(model, features_of(model, seed), max_new_tokens=8).tokens
            for seed in range(3)]
    assert len({t for tokens in said for t in tokens}) >= 4, said


def test_the_prompt_is_the_generation_config_s(models):
    _, _, model, folder = models
    prompts = {greedy(model, features_of(model, seed), max_new_tokens=1).prompt
               for seed in range(6)}
    if folder.name.startswith("mels128"):
        # start, the language detected, the task forced, <|notimestamps|>
        assert {p[:1] + p[2:] for p in prompts} == {(85, 81, 82)}
        assert {p[1] for p in prompts} <= {70, 71, 72} and len({p[1] for p in prompts}) > 1
        assert model.generation.alignment_heads == ((2, 0), (1, 0))
    else:
        assert prompts == {(100,)}


def test_each_step_s_row_is_the_teacher_forced_row(models):
    _, _, model, _ = models
    features = features_of(model, 4)
    done = greedy(model, features, max_new_tokens=6)
    run = model.forward(features, [*done.prompt, *done.tokens[:-1]])
    np.testing.assert_allclose(done.cross_attentions,
                               run.cross_attentions[:, :, len(done.prompt) - 1:], atol=3e-5)


def test_greedy_from_audio_equals_the_pipeline_of_transformers(models):
    """Audio -> WhisperFeatureExtractor -> generate, against audio -> model.features ->
    greedy; the clip is as long as the model reads (its chunk_length)."""
    from transformers import WhisperFeatureExtractor

    _, ref32, model, _ = models
    seconds = model.front.chunk_length
    t = np.arange(seconds * 16000) / 16000
    audio = (0.5 * np.sin(2 * np.pi * (200 + 1500 * t) * t)).astype(np.float32)
    extractor = WhisperFeatureExtractor(feature_size=model.config.num_mel_bins,
                                        chunk_length=seconds)
    ref = extractor(audio, sampling_rate=16000, return_tensors="np").input_features[0]
    ours = model.features(audio)
    np.testing.assert_allclose(ours, ref, atol=1e-4)   # torch's STFT: float32
    done = greedy(model, ours, max_new_tokens=8)
    assert done.tokens == generate(ref32, ref, 8, done.prompt)


def test_the_weights_map_the_file(models):
    _, _, model, _ = models
    for array in (model.embed_tokens, model.encoder_layers[0].fc1.weight,
                  model.decoder_layers[-1].encoder_attn.W_K, model.conv2[0]):
        assert not array.flags.writeable and not array.flags.owndata
    assert model.nbytes == pytest.approx(sum(
        np.prod(s) * 4 for s in _declared_shapes(model)), rel=0)


def _declared_shapes(model):
    from xattn.speech.weights import expected_shapes

    shapes = list(expected_shapes(model.config).values())
    if model.proj_out is not model.embed_tokens:
        shapes.append(model.proj_out.shape)
    return shapes


def test_the_encoder_never_holds_a_whole_attention_matrix(tmp_path):
    """At 1500 positions one layer's attention weights would take 4 x 1500 x 1500 x 4 bytes
    = 36 MB; the encoder works a block of query rows at a time."""
    models_or_skip()
    from devtools.tiny_whisper import save_whisper

    sizes = {**TINY, "max_source_positions": 1500, "encoder_layers": 1, "decoder_layers": 1}
    model = Whisper.from_folder(save_whisper(tmp_path / "long", seed=0, **sizes))
    features = features_of(model, 0)
    tracemalloc.start()
    try:
        model.encode(features)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8e6, f"encoding peaked at {peak / 1e6:.1f} MB"


# ---------------------------------------------------------------- refusals (no torch needed)
SMALL = dict(model_type="whisper", vocab_size=50, d_model=8, encoder_layers=1, decoder_layers=1,
             encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16,
             decoder_ffn_dim=16, num_mel_bins=80, max_source_positions=50,
             max_target_positions=10, decoder_start_token_id=40, eos_token_id=41,
             pad_token_id=42)


def numpy_folder(folder, config=SMALL, edit=None):
    """A folder written without torch: config.json and random tensors of every expected
    shape; ``edit(tensors)`` may change them first."""
    from safetensors.numpy import save_file

    from xattn.speech import WhisperConfig
    from xattn.speech.weights import expected_shapes

    folder.mkdir(parents=True, exist_ok=True)
    sizes = {k: v for k, v in config.items() if k != "model_type"}
    rng = np.random.default_rng(0)
    tensors = {name: rng.standard_normal(shape).astype(np.float32)
               for name, shape in expected_shapes(WhisperConfig(**sizes)).items()}
    if edit is not None:
        edit(tensors)
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_a_folder_written_without_torch_runs(tmp_path):
    model = Whisper.from_folder(numpy_folder(tmp_path / "m"))
    done = greedy(model, features_of(model, 0), max_new_tokens=5)
    assert len(done.tokens) >= 1 and done.cross_attentions.shape[:2] == (1, 2)
    assert model.front.chunk_length == 1 and model.tokenizer is None
    assert repr(model).startswith("Whisper(name=")


@pytest.mark.parametrize("edit,match", [
    (lambda t: t.pop("model.decoder.layers.0.encoder_attn.k_proj.weight"),
     r"has no tensor model.decoder.layers.0.encoder_attn.k_proj.weight; expected one of "
     r"shape \(8, 8\)"),
    (lambda t: t.update({"model.encoder.conv1.weight": np.zeros((8, 80, 5), np.float32)}),
     r"conv1.weight must have shape \(8, 80, 3\) for this config.json; received shape "
     r"\(8, 80, 5\)"),
    (lambda t: t.update({"model.encoder.layers.0.self_attn.k_proj.bias": np.zeros(8,
                                                                              np.float32)}),
     r"holds tensors a whisper model does not have, e.g. "
     r"'model.encoder.layers.0.self_attn.k_proj.bias'"),
    (lambda t: t.update({"model.decoder.embed_tokens.weight": np.zeros((50, 8), np.float16)}),
     r"embed_tokens.weight is stored as float16; Whisper runs here from float32 weights only"),
])
def test_wrong_weights_are_refused(tmp_path, edit, match):
    with pytest.raises(ValueError, match=match):
        Whisper.from_folder(numpy_folder(tmp_path / "m", edit=edit))


@pytest.mark.parametrize("change,match", [
    (dict(model_type="marian"), "model_type must be 'whisper'.*received 'marian'"),
    (dict(d_model=9), "encoder_attention_heads must divide d_model=9; received 2"),
    (dict(eos_token_id=50), "eos_token_id must be below vocab_size=50; received 50"),
    (dict(encoder_layers=10 ** 9), r"encoder_layers = 1000000000, but model.safetensors holds "
                                   r"\d+ tensors"),
])
def test_wrong_configs_are_refused(tmp_path, change, match):
    folder = numpy_folder(tmp_path / "m")
    (folder / "config.json").write_text(json.dumps({**SMALL, **change}))
    with pytest.raises(ValueError, match=match):
        Whisper.from_folder(folder)


def test_encoder_positions_must_make_whole_seconds_without_a_preprocessor_config(tmp_path):
    folder = numpy_folder(tmp_path / "m", {**SMALL, "max_source_positions": 75})
    with pytest.raises(ValueError, match="max_source_positions=75 is not a whole number of "
                                         "seconds"):
        Whisper.from_folder(folder)
    (folder / "preprocessor_config.json").write_text(json.dumps({"chunk_length": 1}))
    with pytest.raises(ValueError, match="preprocessor_config.json gives 80 mel bins and 100 "
                                         "frames; config.json expects 80 and 150"):
        Whisper.from_folder(folder)


@pytest.mark.parametrize("generation,match", [
    ({"forced_decoder_ids": [[2, 3]]}, r"forced_decoder_ids must be \[position, token\] pairs "
                                       r"for positions 1, 2, 3"),
    ({"suppress_tokens": [1, 99]}, "suppress_tokens must be a list of at most 4096 token ids "
                                   "below 50"),
    ({"no_timestamps_token_id": "x"}, "no_timestamps_token_id must be a token id below 50"),
    ({"language": "en"}, r"sets language='en', which is not read here.*prompt=\.\.\."),
    ({"alignment_heads": [[1, 0]]}, r"alignment_heads must be \[layer, head\] pairs within "
                                    r"1 layers and 2 heads; received \[\[1, 0\]\]"),
    ({"lang_to_id": {"<|en|>": 50}}, "lang_to_id must map at most 4096 language tokens to "
                                     "ids below 50"),
])
def test_wrong_generation_configs_are_refused(tmp_path, generation, match):
    folder = numpy_folder(tmp_path / "m")
    (folder / "generation_config.json").write_text(json.dumps(generation))
    with pytest.raises(ValueError, match=match):
        Whisper.from_folder(folder)


def test_a_pickle_is_refused_unopened(tmp_path):
    folder = numpy_folder(tmp_path / "m")
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    with pytest.raises(ValueError, match="pickle-based PyTorch file, which is refused"):
        Whisper.from_folder(folder)


def test_wrong_inputs_are_refused(tmp_path):
    model = Whisper.from_folder(numpy_folder(tmp_path / "m"))
    with pytest.raises(ValueError, match=r"features must have shape \(80, 100\) \(mel bins, "
                                         r"frames: 1 s\); received shape \(80, 3000\)"):
        model.forward(np.zeros((80, 3000)), [40])
    with pytest.raises(ValueError, match="each of decoder_input_ids must be an int >= 0 and "
                                         "<= 49; received 50"):
        model.forward(features_of(model, 0), [40, 50])
    with pytest.raises(ValueError, match=r"max_new_tokens must be an int >= 1 and <= 9; "
                                         r"received 10"):
        greedy(model, features_of(model, 0), max_new_tokens=10)
    with pytest.raises(ValueError, match=r"head_mask must have shape \(1, 2\)"):
        model.forward(features_of(model, 0), [40], head_mask=np.ones((2, 2)))


def test_a_tokenizer_json_gives_text(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(["the cat sat on the mat", "a dog and a cat"],
                            trainers.BpeTrainer(vocab_size=40, special_tokens=["<|eot|>"]))
    folder = numpy_folder(tmp_path / "m")
    tok.save(str(folder / "tokenizer.json"))
    model = Whisper.from_folder(folder)
    ids = tok.encode("the cat").ids + [tok.token_to_id("<|eot|>")]
    assert model.tokenizer.decode(ids) == tok.decode(ids, skip_special_tokens=True)
    assert model.tokenizer.id_to_piece(ids)[-1] == "<|eot|>"
    (folder / "tokenizer.json").write_text("{not json")
    with pytest.raises(ValueError, match="tokenizer.json is not a tokenizers file"):
        Whisper.from_folder(folder)


# ---------------------------------------------------------------- the pieces
@pytest.mark.parametrize("n,c_in,c_out,stride", [(3000, 80, 16, 1), (3000, 16, 16, 2),
                                                 (7, 3, 4, 2), (8, 3, 4, 2), (1, 2, 3, 1),
                                                 (1, 2, 3, 2), (600, 5, 6, 1)])
def test_conv1d_equals_torch(n, c_in, c_out, stride):
    models_or_skip()
    import torch

    from xattn.speech.layers import conv1d

    rng = np.random.default_rng(n + stride)
    x = rng.standard_normal((n, c_in)).astype(np.float32)
    w = rng.standard_normal((c_out, c_in, 3)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    ref = torch.nn.functional.conv1d(torch.from_numpy(x.T.copy())[None], torch.from_numpy(w),
                                     torch.from_numpy(b), stride=stride, padding=1)[0].numpy()
    np.testing.assert_allclose(conv1d(x, w, b, stride), ref.T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n_heads,n_tgt,n_src,key_bias", [(4, 3, 7, False), (1, 1, 4, True),
                                                          (2, 5, 3, True)])
def test_folded_cross_attention_equals_the_module(n_heads, n_tgt, n_src, key_bias):
    """Keys and values never projected, yet the module's own numbers (a key bias too: it
    is the same for every key of a row)."""
    from xattn.attention import MultiHeadCrossAttention
    from xattn.speech.layers import cross_attention

    d = 8
    rng = np.random.default_rng(n_heads)
    w = [rng.standard_normal((d, d)).astype(np.float32) * 0.5 for _ in range(4)]
    b = [rng.standard_normal(d).astype(np.float32) for _ in range(4)]
    attn = MultiHeadCrossAttention.from_weights(*w, n_heads=n_heads, b_Q=b[0],
                                                b_K=b[1] if key_bias else None, b_V=b[2],
                                                b_O=b[3])
    x = rng.standard_normal((n_tgt, d)).astype(np.float32)
    enc = rng.standard_normal((n_src, d)).astype(np.float32)
    gate = np.arange(n_heads, dtype=np.float32) % 2
    for head_mask in (None, gate):
        out, weights = cross_attention(x, enc, attn, head_mask)
        ref_out, ref_weights = attn(x, enc, head_mask=head_mask)
        np.testing.assert_allclose(weights, ref_weights, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-5)


def test_the_snippet_in_docs_models_runs(tmp_path, monkeypatch):
    """docs/models.md's Whisper example, on a folder written here and a WAV of one second."""
    import re
    import wave
    from pathlib import Path

    docs = (Path(__file__).resolve().parent.parent / "docs" / "models.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", docs, flags=re.S)
                 if "from xattn.speech import" in b)
    numpy_folder(tmp_path / "whisper-tiny", {**SMALL, "max_target_positions": 80})
    t = np.arange(16000) / 16000
    with wave.open(str(tmp_path / "clip.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes((np.sin(2 * np.pi * 440 * t) * 12000).astype("<i2").tobytes())
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(block, "docs/models.md", "exec"), scope)
    assert scope["run"].cross_attentions.shape[:3] == (1, 2, len(scope["done"].tokens))

"""Real-model cross-attention on a tiny random Marian made offline (no download).

Tests that need torch, transformers and sentencepiece skip with the reason where they are
missing, and fail instead when XATTN_REQUIRE_MODELS=1 (set by CI). The allow-list, the
missing-packages message, the import boundary and the CLI's errors run everywhere.
"""

import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from model_helpers import REQUIRE_ENV, models_or_skip

from xattn.attnfile import load_attention
from xattn.steps import stages
from xattn.subwords import merge_words, word_groups, word_texts
from xattn.torch_models import (
    DEFAULT_MODELS,
    LoadedModel,
    ModelUnavailable,
    allowed_models,
    cross_attention,
    layer_ablation,
    layer_trace,
    load_model,
    main,
    missing_packages,
)

ROOT = Path(__file__).resolve().parent.parent
SRC = "the cat sat on the mat."
TGT = "le chat est assis."


@pytest.fixture(scope="session")
def loaded(tiny_dir) -> LoadedModel:
    return load_model(tiny_dir, allowed=[tiny_dir])


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------- without torch
def test_importing_never_imports_torch():
    code = ("import sys, xattn.torch_models, xattn.attnfile, xattn.subwords\n"
            "xattn.torch_models.missing_packages(); xattn.torch_models.allowed_models()\n"
            "xattn.torch_models.main(['--list'])\n"
            "print(sorted(m for m in ('torch', 'transformers', 'sentencepiece') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.splitlines()[-1] == "[]"


def test_module_runs_as_a_script_with_the_deployers_list():
    env = {**os.environ, "XATTN_MODELS": "a/b, ./local-model"}
    out = subprocess.run([sys.executable, "-m", "xattn.torch_models", "--list"], capture_output=True,
                         text=True, cwd=ROOT, env=env)
    assert (out.returncode, out.stdout) == (0, "a/b\n./local-model\n")


@pytest.mark.parametrize("value, expected", [
    (None, DEFAULT_MODELS), ("", DEFAULT_MODELS), (" , ", DEFAULT_MODELS),
    (" x/y ,, z ", ("x/y", "z")),
])
def test_allowed_models(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("XATTN_MODELS", raising=False)
    else:
        monkeypatch.setenv("XATTN_MODELS", value)
    assert allowed_models() == expected


def test_names_off_the_list_are_refused_before_anything_is_loaded(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)   # would fail if it got that far
    monkeypatch.setenv("XATTN_MODELS", "Helsinki-NLP/opus-mt-en-fr,mine")
    with pytest.raises(ValueError, match=r"^'evil/model' is not on this server's list of models; "
                                         r"allowed: Helsinki-NLP/opus-mt-en-fr, mine\. A deployer "
                                         r"sets the list with the environment variable "
                                         r"XATTN_MODELS"):
        load_model("evil/model")
    with pytest.raises(ValueError, match="allowed: a, b"):
        load_model("Helsinki-NLP/opus-mt-en-fr", allowed=["a", "b"])
    with pytest.raises(TypeError, match="name must be a string; received int"):
        load_model(3)
    with pytest.raises(TypeError, match="allowed must be a list of names"):
        load_model("a", allowed="a")


@pytest.mark.parametrize("absent, expected", [
    (["torch"], "Real translation models need torch, which is not installed: "
                "pip install -r requirements-models.txt"),
    (["sentencepiece", "transformers"], "Real translation models need transformers, "
                                        "sentencepiece, which are not installed: "
                                        "pip install -r requirements-models.txt"),
])
def test_missing_packages_message(monkeypatch, absent, expected):
    for name in ("torch", "transformers", "sentencepiece"):
        # None: `import name` raises ImportError; a module object: it is there
        monkeypatch.setitem(sys.modules, name, None if name in absent else types.ModuleType(name))
    assert missing_packages() == expected
    with pytest.raises(ModelUnavailable) as info:
        load_model(DEFAULT_MODELS[0])
    assert str(info.value) == expected


def test_skip_or_fail_when_packages_are_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="model tests skipped: Real translation"):
        models_or_skip()
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="XATTN_REQUIRE_MODELS is set but"):
        models_or_skip()


@pytest.mark.parametrize("argv, message", [
    (["export", "--model", "evil/model", "--src", "hi", "-o", "x.npz"],
     "'evil/model' is not on this server's list of models"),
    (["export", "--model", "x"], "the following arguments are required: --src, -o/--output"),
    ([], "give --list or the export command"),
    (["export", "--model", "x", "--src", "a", "-o", "f", "--max-new-tokens", "many"],
     "argument --max-new-tokens: invalid int value: 'many'"),
])
def test_cli_errors_are_one_line_and_exit_2(capsys, monkeypatch, argv, message):
    monkeypatch.delenv("XATTN_MODELS", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("python -m xattn.torch_models: error: ") and message in err


# ---------------------------------------------------------------- with the tiny Marian
def test_loaded_model(loaded, tiny_dir):
    assert missing_packages() is None
    assert (loaded.n_layers, loaded.n_heads, loaded.d_model) == (2, 4, 16)
    assert repr(loaded).startswith(f"LoadedModel(name={tiny_dir!r}, n_layers=2, n_heads=4, "
                                   f"d_model=16, parameters=0.0")
    assert loaded.model.config._attn_implementation == "eager"
    assert not loaded.model.training


def test_loaded_model_refuses_other_objects(loaded):
    with pytest.raises(TypeError, match="encoder-decoder .* received object"):
        LoadedModel(object(), loaded.tokenizer)
    with pytest.raises(TypeError, match="tokenizer must be a transformers tokenizer; received str"):
        LoadedModel(loaded.model, "tokenizer")


def test_piece_weights_equal_the_models_own(loaded):
    import torch

    r = cross_attention(loaded, SRC, TGT, words=False)
    tok, model = loaded.tokenizer, loaded.model
    src_ids = tok(SRC)["input_ids"]
    tgt_ids = tok(text_target=TGT)["input_ids"]
    assert r.src_ids == tuple(src_ids) and r.tgt_ids == tuple(tgt_ids)
    assert r.tgt_pieces == tuple(tok.convert_ids_to_tokens(tgt_ids))
    assert r.tgt_pieces[-1] == "</s>" and r.src_tokens == r.src_pieces
    # Independently: the decoder reads the start token, then the target shifted right by one,
    # so row i is the step whose output is target token i.
    decoder_in = [model.config.decoder_start_token_id, *tgt_ids[:-1]]
    with torch.no_grad():
        out = model(input_ids=torch.tensor([src_ids]), decoder_input_ids=torch.tensor([decoder_in]),
                    output_attentions=True)
    expected = np.stack([a[0].numpy() for a in out.cross_attentions])
    assert r.weights.dtype == np.float32
    assert r.weights.shape == (2, 4, len(tgt_ids), len(src_ids))
    np.testing.assert_allclose(r.weights, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0, atol=1e-5)
    assert (r.translated, r.src_text, r.tgt_text, r.words) == (False, SRC, TGT, False)


def test_words_merge_the_pieces(loaded):
    pieces = cross_attention(loaded, "unbelievable cats!", "des chats", words=False)
    words = cross_attention(loaded, "unbelievable cats!", "des chats")
    assert len(pieces.src_pieces) > 6                     # the tiny vocabulary splits words up
    assert words.src_tokens == ("unbelievable", "cats!", "</s>")
    assert words.tgt_tokens == ("des", "chats", "</s>")
    assert words.src_groups.tolist() == word_groups(pieces.src_pieces).tolist()
    np.testing.assert_allclose(words.weights, merge_words(pieces.weights, words.src_groups,
                                                          words.tgt_groups), rtol=1e-6)
    assert words.weights.shape == (2, 4, 3, 3) and words.weights.dtype == np.float32
    np.testing.assert_allclose(words.weights.sum(axis=-1), 1.0, atol=1e-5)
    assert words.src_tokens == tuple(word_texts(pieces.src_pieces, words.src_groups))


@pytest.mark.parametrize("tgt", [None, "", "   "])
def test_translates_then_attends(loaded, tgt):
    import torch

    r = cross_attention(loaded, SRC, tgt, max_new_tokens=6, words=False)
    tok, model = loaded.tokenizer, loaded.model
    with torch.no_grad():
        greedy = model.generate(input_ids=torch.tensor([tok(SRC)["input_ids"]]), num_beams=1,
                                do_sample=False, max_new_tokens=6)[0].tolist()
    assert greedy[0] == model.config.decoder_start_token_id
    assert r.translated and r.tgt_ids == tuple(greedy[1:])
    assert r.tgt_text == tok.decode(greedy[1:], skip_special_tokens=True) != ""
    assert r.weights.shape == (2, 4, len(r.tgt_ids), len(r.src_ids))
    assert len(r.tgt_ids) <= 6
    again = cross_attention(loaded, SRC, r.tgt_text, words=False)  # same text, teacher forced
    assert again.translated is False


def test_sdpa_attention_gives_a_clear_error(loaded):
    from devtools.tiny_marian import tiny_marian

    sdpa = LoadedModel(tiny_marian(loaded.tokenizer, attn_implementation="sdpa"),
                       loaded.tokenizer, "sdpa")
    with pytest.raises(ModelUnavailable, match=r"no cross-attention weights: its attention runs "
                                               r"as 'sdpa'.*attn_implementation=\"eager\""):
        cross_attention(sdpa, SRC, TGT)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(src=""), ValueError, "src must not be empty"),
    (dict(src=3), TypeError, "src must be a string; received int"),
    (dict(tgt=b"x"), TypeError, "tgt must be a string; received bytes"),
    (dict(words=1), TypeError, "words must be True or False; received int 1"),
    (dict(max_new_tokens=True), TypeError, "max_new_tokens must be an int; received bool True"),
    (dict(max_new_tokens=2.0), TypeError, "max_new_tokens must be an int; received float 2.0"),
    (dict(max_new_tokens=0), ValueError, r"max_new_tokens must be an int >= 1 and <= 1024; "
                                         "received 0"),
    (dict(src="the cat " * 200), ValueError, r"The source has \d+ pieces; .* reads at most 256"),
])
def test_cross_attention_refuses(loaded, kwargs, error, match):
    args = dict(src=SRC, tgt=TGT) | kwargs
    with pytest.raises(error, match=match):
        cross_attention(loaded, args.pop("src"), args.pop("tgt"), **args)


def test_cross_attention_needs_a_loaded_model():
    with pytest.raises(TypeError, match="model must be a loaded translation model .* received str"):
        cross_attention("Helsinki-NLP/opus-mt-en-fr", SRC)


def test_unloadable_folder_gives_one_plain_sentence(tmp_path):
    models_or_skip()
    folder = str(tmp_path)                        # exists, holds no model
    with pytest.raises(ModelUnavailable) as info:
        load_model(folder, allowed=[folder])
    message = str(info.value)
    assert message.startswith(f"Could not load the tokenizer of {folder!r}: ")
    assert "\n" not in message and "Traceback" not in message and len(message) < 320


def test_no_network_gives_one_plain_sentence(monkeypatch):
    models_or_skip()
    import socket

    import huggingface_hub.constants

    def no_network(*args, **kwargs):
        raise socket.gaierror("no network in this test")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)          # never download anything
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # and fail at once
    name = "xattn-tests/no-such-model"          # in nobody's cache
    with pytest.raises(ModelUnavailable) as info:
        load_model(name, allowed=[name])
    assert str(info.value) == (
        "'xattn-tests/no-such-model' is not on this machine and the Hugging Face hub cannot be "
        "reached. The first use downloads it once; later loads read the local cache (HF_HOME).")


def test_an_unreachable_hub_is_found_out_before_transformers_retries(monkeypatch):
    """Without network, transformers retries for about 50 s before it gives up: a quick
    connection check answers first (the same sentence), and transformers is never asked."""
    models_or_skip()
    import socket

    from xattn.torch_models import _loading

    def no_network(*args, **kwargs):
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(_loading, "_load", lambda *a, **k: pytest.fail("transformers asked"))
    name = "xattn-tests/no-such-model"
    with pytest.raises(ModelUnavailable, match="hub cannot be reached"):
        load_model(name, allowed=[name])


# ---------------------------------------------------------------- one layer, opened up
@pytest.mark.parametrize("layer", [0, 1])
def test_layer_trace_is_the_real_computation(loaded, layer):
    r = cross_attention(loaded, SRC, TGT, words=False)
    t = layer_trace(loaded, r, layer)
    n_tgt, n_src = len(r.tgt_ids), len(r.src_ids)
    assert t.q.shape == (4, n_tgt, 4) and t.k.shape == t.v.shape == (4, n_src, 4)
    assert t.concat.shape == t.output.shape == (n_tgt, 16) and t.mask.all()
    assert t.scale == pytest.approx(0.5)
    np.testing.assert_array_equal(t.weights, r.weights[layer])
    # the recorded q and k reproduce the model's weights; v and W_O its outputs
    np.testing.assert_allclose(softmax(t.masked_scores), t.weights, atol=1e-6)
    np.testing.assert_allclose(t.weights @ t.v, t.head_outputs, atol=1e-6)
    out_proj = loaded.model.get_decoder().layers[layer].encoder_attn.out_proj
    w_o, b_o = out_proj.weight.detach().numpy(), out_proj.bias.detach().numpy()
    np.testing.assert_allclose(t.concat @ w_o.T + b_o, t.output, atol=1e-6)
    assert len(stages(t, head=3, i=n_tgt - 1)) == 10   # the step-through view accepts it
    same = layer_trace(loaded, (r.src_ids, r.tgt_ids), layer)
    np.testing.assert_array_equal(same.q, t.q)


@pytest.mark.parametrize("layer, error, match", [
    (2, ValueError, "layer must be an int >= 0 and <= 1; received 2"),
    (-1, ValueError, "layer must be an int >= 0 and <= 1; received -1"),
    (True, TypeError, "layer must be an int; received bool True"),
    (1.0, TypeError, "layer must be an int; received float 1.0"),
])
def test_layer_must_exist(loaded, layer, error, match):
    with pytest.raises(error, match=match):
        layer_trace(loaded, ((1, 2), (3,)), layer)


def test_layer_ablation_matches_the_trace(loaded):
    r = cross_attention(loaded, SRC, TGT)
    t = layer_trace(loaded, r, 1)
    res = layer_ablation(loaded, r, 1, heads_off=[0, 2])
    w_o = loaded.model.get_decoder().layers[1].encoder_attn.out_proj.weight.detach().numpy()

    def without(heads):                   # Y minus the switched-off heads' share of concat W_O^T
        drop = sum(t.head_outputs[h] @ w_o[:, h * 4:(h + 1) * 4].T for h in heads)
        return t.output - drop

    def change(y_off, axis=None):
        return np.linalg.norm(t.output - y_off, axis=axis) / np.linalg.norm(t.output, axis=axis)

    np.testing.assert_allclose(res.per_head, [change(without([h])) for h in range(4)], rtol=1e-4)
    assert res.chosen == pytest.approx(change(without([0, 2])), rel=1e-4)
    np.testing.assert_allclose(res.per_token, change(without([0, 2]), axis=-1), rtol=1e-4)
    assert res.per_token.shape == (len(r.tgt_ids),) and res.heads_off == (0, 2)
    assert layer_ablation(loaded, r, 1).chosen == 0.0
    with pytest.raises(ValueError, match=r"heads_off must be an int >= 0 and <= 3; received 4"):
        layer_ablation(loaded, r, 1, heads_off=[4])


def test_hooks_are_removed_and_passes_wait_for_each_other(loaded):
    import threading

    r = cross_attention(loaded, SRC, TGT, words=False)
    attn = loaded.model.get_decoder().layers[1].encoder_attn
    modules = [attn, attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj]

    def hooks():   # transformers keeps a hook of its own on attention modules
        return [(list(m._forward_hooks), list(m._forward_pre_hooks)) for m in modules]

    before = hooks()
    layer_ablation(loaded, r, 1, heads_off=[0])
    layer_trace(loaded, r, 1)
    assert hooks() == before
    # While a trace or an ablation holds the model, another session's pass waits for it.
    results = []
    worker = threading.Thread(target=lambda: results.append(
        cross_attention(loaded, SRC, TGT, words=False)))
    with loaded.lock:
        worker.start()
        worker.join(timeout=0.5)
        assert worker.is_alive() and results == []
    worker.join()
    np.testing.assert_array_equal(results[0].weights, r.weights)


def test_translation_fits_the_positions(loaded):
    r = cross_attention(loaded, SRC, max_new_tokens=1024, words=False)
    assert len(r.tgt_ids) <= 255          # max_position_embeddings of the tiny model: 256


# ---------------------------------------------------------------- files
def test_cli_export_writes_a_file_load_attention_reads(loaded, tiny_dir, tmp_path, monkeypatch,
                                                       capsys):
    monkeypatch.setenv("XATTN_MODELS", tiny_dir)
    out = tmp_path / "attention.npz"
    assert main(["export", "--model", tiny_dir, "--src", SRC, "--tgt", TGT, "-o", str(out)]) == 0
    f = load_attention(out)
    r = cross_attention(loaded, SRC, TGT)
    np.testing.assert_array_equal(f.weights, r.weights)
    assert (f.src_tokens, f.tgt_tokens, f.model, f.src_text, f.tgt_text) == \
        (r.src_tokens, r.tgt_tokens, tiny_dir, SRC, TGT)
    assert main(["export", "--model", tiny_dir, "--src", SRC, "--pieces", "--max-new-tokens", "5",
                 "-o", str(out)]) == 0
    assert "translation: " in capsys.readouterr().out
    f = load_attention(out)
    assert f.src_tokens == r.src_pieces and len(f.tgt_tokens) <= 5


def test_cli_process_prints_one_line_when_loading_fails(tmp_path):
    models_or_skip()
    env = {**os.environ, "XATTN_MODELS": str(tmp_path)}     # allowed, but holds no model
    out = subprocess.run([sys.executable, "-m", "xattn.torch_models", "export", "--model",
                          str(tmp_path), "--src", "hi", "-o", str(tmp_path / "a.npz")],
                         capture_output=True, text=True, cwd=ROOT, env=env)
    assert out.returncode == 2
    assert out.stderr.startswith(f"python -m xattn.torch_models: error: Could not load the tokenizer "
                                 f"of {str(tmp_path)!r}: ")
    assert out.stderr.count("\n") == 1           # no warnings, progress bars or traceback


def test_cli_reports_an_unwritable_output(tiny_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XATTN_MODELS", tiny_dir)
    target = tmp_path / "no-such-folder" / "a.npz"
    assert main(["export", "--model", tiny_dir, "--src", SRC, "-o", str(target)]) == 2
    err = capsys.readouterr().err     # transformers may draw a progress bar before it
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m xattn.torch_models: error: ") and "No such file or directory" in last
    assert "Traceback" not in err and err.count("error") == 1

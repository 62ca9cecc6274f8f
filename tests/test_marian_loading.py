"""Loading a NumPy Marian folder: the allow-list, and every way a folder can be wrong.

No torch needed: the broken folders are copies of the shipped model with one thing changed.
Each failure is one ValueError naming what was expected and what was found; a pickle file is
refused without being opened.
"""

import json
import pickle
import shutil

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from xattn.encdec import SHIPPED_FOLDER, SHIPPED_MODEL, EncoderDecoder, load_encdec


@pytest.fixture
def folder(tmp_path):
    """A copy of the shipped model's folder, to break."""
    return shutil.copytree(SHIPPED_FOLDER, tmp_path / "model")


def rewrite(folder, change):
    tensors = load_file(folder / "model.safetensors")
    change(tensors)
    save_file(tensors, str(folder / "model.safetensors"))


def test_the_shipped_model_is_always_allowed(monkeypatch):
    monkeypatch.setenv("XATTN_MODELS", "only/this")
    model = load_encdec()
    assert model.name == SHIPPED_MODEL and repr(model).startswith("EncoderDecoder(name='toy-en-fr', family=marian")
    assert load_encdec(SHIPPED_MODEL, allowed=[]).n_layers == model.n_layers


def test_a_folder_must_be_on_the_list(folder, monkeypatch):
    monkeypatch.delenv("XATTN_MODELS", raising=False)
    with pytest.raises(ValueError, match=r"is not on this server's list of models; allowed: "
                                         r"toy-en-fr, Helsinki-NLP/opus-mt-en-fr"):
        load_encdec(str(folder))
    monkeypatch.setenv("XATTN_MODELS", f"x/y,{folder}")
    assert load_encdec(str(folder)).name == str(folder)
    assert load_encdec(str(folder), allowed=[str(folder)], dtype="float16").name == str(folder)


def test_a_hub_name_needs_downloading_first():
    with pytest.raises(ValueError, match=r"'Helsinki-NLP/opus-mt-en-de' is not a folder here; .*"
                                         r"huggingface-cli download Helsinki-NLP/opus-mt-en-de "
                                         r"--local-dir DIR.*python -m xattn.torch_models convert "
                                         r"Helsinki-NLP/opus-mt-en-de DIR"):
        load_encdec("Helsinki-NLP/opus-mt-en-de")


@pytest.mark.parametrize("name,allowed,error,match", [
    (3, None, TypeError, r"name must be a string; received int"),
    ("x", "x", TypeError, r"allowed must be a list of names, not one string"),
])
def test_argument_types(name, allowed, error, match):
    with pytest.raises(error, match=match):
        load_encdec(name, allowed=allowed)


def test_a_missing_tensor_is_named_with_its_shape(folder):
    rewrite(folder, lambda t: t.pop("model.decoder.layers.1.encoder_attn.k_proj.bias"))
    with pytest.raises(ValueError, match=r"model.safetensors has no tensor model.decoder.layers.1"
                                         r".encoder_attn.k_proj.bias; expected one of shape "
                                         r"\(64,\) for this config.json"):
        EncoderDecoder.from_folder(folder)


def test_a_wrong_shape_says_expected_and_received(folder):
    def widen(t):
        t["model.encoder.layers.0.fc1.weight"] = np.zeros((255, 64), np.float32)
    rewrite(folder, widen)
    with pytest.raises(ValueError, match=r"tensor model.encoder.layers.0.fc1.weight must have "
                                         r"shape \(256, 64\) for this config.json; received "
                                         r"shape \(255, 64\)"):
        EncoderDecoder.from_folder(folder)


def test_tensors_of_another_architecture_are_refused(folder):
    rewrite(folder, lambda t: t.update({"model.encoder.layernorm_embedding.weight":
                                        np.ones(64, np.float32)}))
    with pytest.raises(ValueError, match=r"tensors a marian model does not have, e.g. "
                                         r"'model.encoder.layernorm_embedding.weight'"):
        EncoderDecoder.from_folder(folder)


class _Boom:
    """Unpickling this creates a file: proof that a pickle was opened."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_pickle_file_is_refused_without_being_opened(folder, tmp_path, monkeypatch):
    marker = tmp_path / "unpickled"
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Boom(str(marker))))
    def never(*args, **kwargs):
        raise AssertionError("a pickle was opened")
    monkeypatch.setattr(pickle, "load", never)
    monkeypatch.setattr(pickle, "loads", never)
    monkeypatch.setattr(pickle, "Unpickler", never)
    with pytest.raises(ValueError, match=r"holds pytorch_model.bin, a pickle-based PyTorch file, "
                                         r"which is refused: loading it would run any code it "
                                         r"names.*python -m xattn.torch_models convert NAME DIR"):
        EncoderDecoder.from_folder(folder)
    assert not marker.exists()


def test_a_folder_without_weights(folder):
    (folder / "model.safetensors").unlink()
    with pytest.raises(ValueError, match=r"has no model.safetensors\. Convert the checkpoint"):
        EncoderDecoder.from_folder(folder)


def test_a_file_that_is_not_safetensors(folder):
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match=r"model.safetensors is not a safetensors file"):
        EncoderDecoder.from_folder(folder)


def test_sharded_weights_are_read_and_shards_stay_in_the_folder(folder):
    tensors = load_file(folder / "model.safetensors")
    names = sorted(tensors)
    half = len(names) // 2
    for i, part in enumerate((names[:half], names[half:])):
        save_file({n: tensors[n] for n in part}, str(folder / f"model-{i}.safetensors"))
    (folder / "model.safetensors").unlink()
    index = {"weight_map": {n: f"model-{int(k >= half)}.safetensors" for k, n in
                            enumerate(names)}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    ids = [5, 6, 0]
    np.testing.assert_array_equal(EncoderDecoder.from_folder(folder).encode(ids),
                                  load_encdec().encode(ids))
    index["weight_map"][names[0]] = "../elsewhere.safetensors"
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match=r"names a shard outside the folder"):
        EncoderDecoder.from_folder(folder)


@pytest.mark.parametrize("change,match", [
    ({"model_type": "gpt2"}, r"model_type must be one of marian, bart, mbart, m2m_100, t5 .*"
                             r"received 'gpt2'"),
    ({"d_model": 64.0}, r"d_model must be int; received float 64.0"),
    ({"scale_embedding": 1}, r"scale_embedding must be bool; received int 1"),
    ({"decoder_attention_heads": 5}, r"decoder_attention_heads must divide d_model=64; received 5"),
    ({"activation_function": "mish"}, r"activation_function must be one of swish, .*received 'mish'"),
    ({"encoder_layers": 0}, r"encoder_layers must be >= 1; received 0"),
    ({"eos_token_id": 10**6}, r"eos_token_id must be below decoder_vocab_size"),
    ({"encoder_layers": 9}, r"has no tensor model.encoder.layers.\d.self_attn.q_proj.weight"),
])
def test_config_errors(folder, change, match):
    config = json.loads((folder / "config.json").read_text())
    config.update(change)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=match):
        EncoderDecoder.from_folder(folder)


def test_tokenizer_errors(folder):
    vocab = json.loads((folder / "vocab.json").read_text())
    del vocab["</s>"]
    (folder / "vocab.json").write_text(json.dumps(vocab))
    with pytest.raises(ValueError, match=r"vocab.json must hold the pieces </s>, <unk>, <pad>; "
                                         r"missing </s>"):
        EncoderDecoder.from_folder(folder)
    (folder / "source.spm").write_bytes(b"not a model")
    with pytest.raises(ValueError, match=r"source.spm is not a sentencepiece model"):
        EncoderDecoder.from_folder(folder)


def test_float16_storage_halves_the_matrices_and_keeps_the_numbers(folder):
    full, half = EncoderDecoder.from_folder(folder), EncoderDecoder.from_folder(folder, dtype="float16")
    assert half.lm_head.dtype == np.float16 and half.final_logits_bias.dtype == np.float32
    assert 0.45 < half.nbytes / full.nbytes < 0.55
    src = full.tokenizer.encode("the red cat sees the dog")
    tgt = full.tokenizer.encode("le chat rouge voit le chien", side="target")
    a, b = full.forward(src, tgt), half.forward(src, tgt)
    np.testing.assert_allclose(a.cross_attention, b.cross_attention, atol=2e-2)
    assert (a.logits.argmax(-1) == b.logits.argmax(-1)).all()
    with pytest.raises(ValueError, match=r"dtype must be 'float32' or 'float16'; received 'int8'"):
        EncoderDecoder.from_folder(folder, dtype="int8")

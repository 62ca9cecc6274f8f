"""Model folders that are wrong or hostile: one clear line each, never a traceback, never a hang.

A folder on the allow-list is still untrusted. Each case here is a copy of a good folder (the
shipped Marian, or a tiny T5 made without torch) with one file broken: sizes a config declares
beyond the weights present (a billion layers), files that are links to ``/dev/zero`` or too
large, JSON nested too deep, safetensors headers that point outside the file. Each is refused
with a ValueError naming the file, before anything of the declared size is built.
"""

import json
import os
import shutil
import struct

import numpy as np
import pytest

import xattn.encdec.weights
from devtools.tiny_models import numpy_t5
from xattn.encdec import SHIPPED_FOLDER, EncoderDecoder, load_encdec


@pytest.fixture
def marian(tmp_path):
    return shutil.copytree(SHIPPED_FOLDER, tmp_path / "marian")


@pytest.fixture
def t5(tmp_path):
    return numpy_t5(tmp_path / "t5")


def refused(folder, match):
    with pytest.raises(ValueError, match=match) as info:
        EncoderDecoder.from_folder(folder)
    assert "\n" not in str(info.value) and len(str(info.value)) < 400
    return str(info.value)


def edit_config(folder, **change):
    config = json.loads((folder / "config.json").read_text())
    config.update(change)
    (folder / "config.json").write_text(json.dumps(config))


def test_a_billion_layers_are_refused_before_any_is_listed(marian, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the declared layers were listed")

    monkeypatch.setattr(xattn.encdec.weights, "names", never)
    edit_config(marian, decoder_layers=1_000_000_000)
    refused(marian, r"config.json declares decoder_layers = 1000000000, but model.safetensors "
                    r"holds \d+ tensors in all")


@pytest.mark.parametrize("change,match", [
    (dict(vocab_size=10**12, decoder_vocab_size=10**12),
     r"tensor model.shared.weight must have shape \(1000000000000, 64\)"),
    (dict(d_model=10**9), r"tensor model.shared.weight must have shape \(223, 1000000000\)"),
    (dict(max_position_embeddings=True), r"max_position_embeddings must be int; received bool"),
    (dict(model_type="gpt2"), r"model_type must be one of marian, bart, mbart, m2m_100, t5"),
])
def test_sizes_the_weights_do_not_have_are_refused(marian, change, match):
    edit_config(marian, **change)
    refused(marian, match)


def test_t5_sizes_are_bounded_by_its_weights_too(t5):
    edit_config(t5, num_decoder_layers=10**9)
    refused(t5, r"declares decoder_layers = 1000000000")
    edit_config(t5, num_decoder_layers=2, relative_attention_num_buckets=10**9)
    refused(t5, r"relative_attention_bias.weight must have shape \(1000000000, 4\)")


@pytest.mark.parametrize("name", ["config.json", "source.spm", "vocab.json", "model.safetensors"])
def test_a_file_that_is_a_link_to_dev_zero_is_refused_unread(marian, name):
    (marian / name).unlink()
    os.symlink("/dev/zero", marian / name)
    refused(marian, rf"{name} is not a regular file")


def test_a_tokenizer_json_that_is_a_link_to_dev_zero(t5):
    (t5 / "tokenizer.json").unlink()
    os.symlink("/dev/zero", t5 / "tokenizer.json")
    refused(t5, r"tokenizer.json is not a regular file")


def test_files_larger_than_their_kind_are_refused_unread(marian, t5):
    with open(marian / "config.json", "ab") as f:           # 2 MB: a sparse file, no data
        f.truncate(2 << 20)
    refused(marian, r"config.json holds 2,097,152 bytes; a file of this kind is at most "
                    r"1,048,576")
    with open(t5 / "tokenizer.json", "ab") as f:
        f.truncate(65 << 20)
    refused(t5, r"tokenizer.json holds 68,157,440 bytes; a file of this kind is at most")


@pytest.mark.parametrize("name", ["config.json", "vocab.json"])
def test_json_nested_too_deep_is_refused_before_parsing(marian, name):
    (marian / name).write_text("[" * 100_000 + "]" * 100_000)
    refused(marian, rf"{name} nests its JSON more than 64 deep")


@pytest.mark.parametrize("text,match", [
    ("not json", r"config.json is not valid JSON"),
    ("[1, 2]", r"config.json must hold a JSON object; received list"),
])
def test_config_json_that_is_not_a_config(marian, text, match):
    (marian / "config.json").write_text(text)
    refused(marian, match)


def header(folder, change) -> None:
    """Rewrite model.safetensors' JSON header with ``change(header)``, data unchanged."""
    path = folder / "model.safetensors"
    data = path.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    head = json.loads(data[8:8 + n])
    change(head)
    raw = json.dumps(head).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data[8 + n:])


def first(head) -> dict:
    return head[next(k for k in head if k != "__metadata__")]


@pytest.mark.parametrize("change,match", [
    (lambda h: first(h).update(data_offsets=[0, 10**12]), r"lies at \[0, 1000000000000\], "
                                                         r"outside the file's"),
    (lambda h: first(h).update(shape=[10**6, 10**6]), r"needs 4,000,000,000,000 bytes; the "
                                                      r"header gives it"),
    (lambda h: first(h).update(dtype="I64"), r"must hold floats; received dtype int64|needs"),
    (lambda h: first(h).update(dtype="X9"), r"has dtype 'X9'; expected one of F32"),
    (lambda h: first(h).update(shape="big"), r"has shape big; expected a list"),
    (lambda h: h.update(deep=json.loads("[" * 80 + "]" * 80)), r"header is not JSON \(nested"),
])
def test_hostile_safetensors_headers_are_refused_before_mapping(marian, change, match):
    header(marian, change)
    refused(marian, match)


def test_a_header_longer_than_the_file(marian):
    path = marian / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(struct.pack("<Q", 10**15) + data[8:])
    refused(marian, r"its header says 1,000,000,000,000,000 bytes, the file holds")
    path.write_bytes(b"\x01\x02")
    refused(marian, r"is not a safetensors file: 2 bytes")


def test_a_folder_without_a_tokenizer_or_its_languages(t5, tmp_path):
    (t5 / "tokenizer.json").unlink()
    refused(t5, r"has no tokenizer: tokenizer.json, or sentencepiece's files")
    from xattn.encdec import FAMILIES
    from xattn.encdec.hub_tokenizer import HubTokenizer
    shutil.copy(numpy_t5(tmp_path / "again") / "tokenizer.json", t5 / "tokenizer.json")
    with pytest.raises(ValueError, match=r"must name the languages of this multilingual model: "
                                         r"set src_lang and tgt_lang"):
        HubTokenizer.from_folder(t5, FAMILIES["mbart"])
    (t5 / "tokenizer_config.json").write_text(json.dumps({"src_lang": "en_XX",
                                                          "tgt_lang": "xx_XX"}))
    with pytest.raises(ValueError, match=r"src_lang 'en_XX' is not a language of this "
                                         r"tokenizer"):
        HubTokenizer.from_folder(t5, FAMILIES["mbart"])


def test_the_page_says_what_is_wrong_in_one_line_and_frees_the_load_lock(marian, monkeypatch):
    from apptest_helpers import messages, run_app

    from xattn.live import models
    from xattn.live.compute import clear_caches

    edit_config(marian, decoder_layers=1_000_000_000)
    monkeypatch.setenv("XATTN_MODELS", str(marian))
    clear_caches()
    models._models().clear()
    try:
        at = run_app({"weights": "model", "model": str(marian)})
    finally:
        models._models().clear()
    assert not at.exception
    errors = messages(at)["error"]
    assert len(errors) == 1 and "declares decoder_layers = 1000000000" in errors[0]
    assert models._LOADING.acquire(blocking=False)
    models._LOADING.release()
    with pytest.raises(ValueError, match=r"declares decoder_layers"):
        load_encdec(str(marian), allowed=[str(marian)])
    assert np.isfinite(load_encdec().forward([5, 0], [5, 0]).logits).all()   # others still load


# --- folders transformers would build: their declared sizes are checked first ---------------

OPUS_MT_EN_DE = {"model_type": "marian", "d_model": 512, "encoder_layers": 6,
                 "decoder_layers": 6, "encoder_ffn_dim": 2048, "decoder_ffn_dim": 2048,
                 "encoder_attention_heads": 8, "decoder_attention_heads": 8,
                 "vocab_size": 58101, "max_position_embeddings": 512}


def sized_folder(tmp_path, config, weight_bytes):
    folder = tmp_path / "sized"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    with open(folder / "model.safetensors", "wb") as f:      # sparse: its size, no bytes
        f.truncate(weight_bytes)
    return folder


@pytest.mark.parametrize("config,weights", [
    (OPUS_MT_EN_DE, 298_000_000),                                   # opus-mt-en-de, float32
    (OPUS_MT_EN_DE, 149_000_000),                                   # ... and float16
    ({**OPUS_MT_EN_DE, "model_type": "m2m_100", "d_model": 1024, "encoder_layers": 12,
      "decoder_layers": 12, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096,
      "vocab_size": 256206}, 2_460_000_000),                        # NLLB-200 distilled 600M
    ({"model_type": "t5", "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6,
      "num_decoder_layers": 6, "num_heads": 8, "vocab_size": 32128}, 242_000_000),  # t5-small
])
def test_the_sizes_of_real_translation_models_pass(tmp_path, config, weights):
    from xattn.torch_models._sizes import check_declared_sizes
    check_declared_sizes(sized_folder(tmp_path, config, weights))


@pytest.mark.parametrize("change,match", [
    (dict(model_type="pegasus", encoder_layers=100_000),
     r"config.json declares encoder_layers = 100000, more than any translation model"),
    (dict(decoder={"num_hidden_layers": 10**6}), r"num_hidden_layers = 1000000"),
    (dict(d_model=10**8), r"d_model = 100000000"),
    (dict(encoder_layers=100, decoder_layers=100),
     r"declares about [\d,]+ million parameters \(200 layers of width 512\), but the "
     r"folder's weight files hold 298.0 MB"),
])
def test_a_folder_declaring_what_its_weights_cannot_hold_is_refused_before_building(
        tmp_path, monkeypatch, change, match):
    from xattn.torch_models import _loading
    from xattn.torch_models._sizes import check_declared_sizes

    folder = sized_folder(tmp_path, {**OPUS_MT_EN_DE, **change}, 298_000_000)
    with pytest.raises(ValueError, match=match) as info:
        check_declared_sizes(folder)
    assert "\n" not in str(info.value) and len(str(info.value)) < 300

    def never(*args, **kwargs):
        raise AssertionError("transformers was asked to build it")

    monkeypatch.setattr(_loading, "missing_packages", lambda: None)
    monkeypatch.setattr(_loading, "_load", never)
    with pytest.raises(ValueError, match=match):
        _loading.load_model(str(folder), allowed=[str(folder)])

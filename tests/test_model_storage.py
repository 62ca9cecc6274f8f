"""A model folder's weights as stored: memory-mapped (from a private snapshot, so that weights
overwritten under a running server never take it down, and are read again on the next use),
float16 and bfloat16 kept as they are.

The NumPy models map ``model.safetensors`` instead of reading it (nothing allocated for the
weights, one copy in the page cache for every process), keep 16-bit matrices in 16 bits and
compute in float32: a checkpoint saved in bfloat16 gives transformers' float64 numbers on those
very weights to 1e-5. ``convert`` writes files every user can read (0644).
"""

import mmap
import os
import stat

import numpy as np
import pytest
from model_helpers import models_or_skip

from xattn._floats import BFLOAT16
from xattn.encdec import SHIPPED_FOLDER, EncoderDecoder, load_encdec

SRC, TGT = "the red cat sees the dog", "le chat rouge voit le chien"


def mapped(a) -> bool:
    """Whether ``a`` is a view of a memory-mapped file (no copy of its numbers)."""
    while isinstance(a, np.ndarray):
        a = a.base
    return isinstance(a, memoryview) and isinstance(a.obj, mmap.mmap)


def test_the_shipped_model_maps_its_file_and_copies_no_matrix():
    model = load_encdec()
    layer = model.decoder_layers[0]
    for a in (model.lm_head, model.embed_tokens_encoder, layer.encoder_attn.W_Q,
              layer.fc1.weight, layer.encoder_attn.b_Q):
        assert mapped(a) and not a.flags.writeable
    size = (SHIPPED_FOLDER / "model.safetensors").stat().st_size
    assert 0.95 < model.nbytes / size <= 1.0          # the file's numbers, each once


@pytest.mark.parametrize("family", ["bart", "t5"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16_bit_checkpoints_load_as_stored_and_compute_in_float32(tmp_path, family, dtype):
    models_or_skip()
    import copy

    import torch
    from transformers import AutoModelForSeq2SeqLM

    from devtools.tiny_models import make_tokenizer, tiny_model
    tokenizer = make_tokenizer(family, tmp_path / "tokenizer")
    model = tiny_model(family, tokenizer, seed=3, spread=0.35 if family == "t5" else 0.6)
    folder = tmp_path / "model"
    model.to(getattr(torch, dtype)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    ours = EncoderDecoder.from_folder(folder)
    stored = BFLOAT16 if dtype == "bfloat16" else np.dtype(np.float16)
    attn = ours.decoder_layers[0].encoder_attn
    assert attn.W_Q.dtype == ours.lm_head.dtype == stored and mapped(attn.W_Q)
    assert ours.nbytes < 0.6 * sum(p.numel() * 4 for p in model.parameters())
    exact = copy.deepcopy(AutoModelForSeq2SeqLM.from_pretrained(
        folder, attn_implementation="eager")).double().eval()    # the stored numbers, exactly
    src = list(tokenizer(SRC)["input_ids"])
    tgt = list(tokenizer(text_target=TGT)["input_ids"])
    with torch.no_grad():
        ref = exact(input_ids=torch.tensor([src]), output_attentions=True,
                    decoder_input_ids=torch.tensor([[ours.config.decoder_start_token_id,
                                                     *tgt[:-1]]]))
    run = ours.forward(src, tgt)
    assert run.logits.dtype == run.cross_attention.dtype == np.float32
    for got, want in ((run.cross_attention, np.stack([a[0] for a in ref.cross_attentions])),
                      (run.logits, ref.logits[0].numpy())):
        np.testing.assert_allclose(got, want, rtol=0,
                                   atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_convert_writes_files_every_user_can_read(tiny_dir, tmp_path, monkeypatch):
    from xattn.torch_models import convert

    monkeypatch.setenv("XATTN_MODELS", tiny_dir)
    old = os.umask(0o077)                 # a umask that would make the files 0600
    try:
        folder, diff = convert(tiny_dir, tmp_path / "converted")
    finally:
        os.umask(old)
    assert diff < 1e-5
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes and set(modes.values()) == {0o644}, modes
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert load_encdec(str(folder), allowed=[str(folder)]).n_layers == 2


def test_a_pickled_checkpoint_of_another_family_converts_to_a_folder_numpy_reads(tmp_path,
                                                                                 monkeypatch):
    """A T5 with only ``pytorch_model.bin``: NumPy refuses to unpickle it; ``convert`` (torch)
    writes safetensors and the tokenizer, which NumPy then reads equal to transformers."""
    models_or_skip()
    import torch

    from devtools.tiny_models import make_tokenizer, tiny_model
    from xattn.torch_models import convert
    tokenizer = make_tokenizer("t5", tmp_path / "tokenizer")
    model = tiny_model("t5", tokenizer, seed=6, spread=0.35)
    pickled = tmp_path / "pickled"                   # as older Hub folders hold them
    model.config.save_pretrained(pickled)
    torch.save(model.state_dict(), pickled / "pytorch_model.bin")
    tokenizer.save_pretrained(pickled)
    with pytest.raises(ValueError, match=r"pytorch_model.bin, a pickle-based PyTorch file"):
        EncoderDecoder.from_folder(pickled)
    monkeypatch.setenv("XATTN_MODELS", str(pickled))
    folder, diff = convert(str(pickled), tmp_path / "converted")
    assert diff < 1e-5 and (folder / "model.safetensors").exists()
    ours = EncoderDecoder.from_folder(folder)
    src = list(tokenizer(SRC)["input_ids"])
    tgt = list(tokenizer(text_target=TGT)["input_ids"])
    with torch.no_grad():
        ref = model(input_ids=torch.tensor([src]), labels=torch.tensor([tgt])).logits[0]
    np.testing.assert_allclose(ours.forward(src, tgt).logits, ref.numpy(), atol=2e-5)


# --- weights changed on disk under a running server ------------------------------------------

OVERWRITE = r"""
import shutil, sys
import numpy as np
from xattn.encdec import SHIPPED_FOLDER, load_encdec
from pathlib import Path
folder = Path(shutil.copytree(SHIPPED_FOLDER, sys.argv[1] + "/model"))
model = load_encdec(str(folder), allowed=[str(folder)])
before = model.forward([5, 7, 0], [5, 0]).logits
path = folder / "model.safetensors"
with open(path, "r+b") as f:         # a deployer copying new weights over the old, in place
    f.truncate(0)
    f.write(b"\0" * 1000)
after = model.forward([5, 7, 0], [5, 0]).logits
print("same" if np.array_equal(before, after) else "different")
"""


def test_weights_overwritten_in_place_never_take_the_process_down(tmp_path):
    """The file a model maps is a private snapshot, so a deployer writing over the folder's
    weights (seen: SIGBUS, the process and every class on it gone) changes nothing under it."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", OVERWRITE, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, cwd=str(SHIPPED_FOLDER.parents[2]))
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])   # -7: SIGBUS
    assert done.stdout.strip() == "same"


def test_without_a_writable_snapshot_folder_the_weights_are_read_into_memory(tmp_path,
                                                                             monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XATTN_WEIGHTS_CACHE", str(blocked / "snapshots"))
    model = load_encdec(str(SHIPPED_FOLDER), allowed=[str(SHIPPED_FOLDER)])
    assert not mapped(model.lm_head) and not model.lm_head.flags.writeable
    np.testing.assert_array_equal(model.forward([5, 0], [5, 0]).logits,
                                  load_encdec().forward([5, 0], [5, 0]).logits)


def test_processes_share_one_snapshot_and_a_changed_file_gets_a_new_one(tmp_path, monkeypatch):
    from xattn.encdec.snapshot import cache_folder

    monkeypatch.setenv("XATTN_WEIGHTS_CACHE", str(tmp_path / "snapshots"))
    folder = tmp_path / "model"
    folder.mkdir()
    for f in SHIPPED_FOLDER.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    load_encdec(str(folder), allowed=[str(folder)])
    load_encdec(str(folder), allowed=[str(folder)])
    (first,) = cache_folder().glob("*.safetensors")
    assert stat.S_IMODE(first.stat().st_mode) == 0o400
    assert stat.S_IMODE(cache_folder().stat().st_mode) == 0o700
    new = folder / "model.safetensors.new"                   # new weights renamed into place
    new.write_bytes((SHIPPED_FOLDER / "model.safetensors").read_bytes())
    os.replace(new, folder / "model.safetensors")
    load_encdec(str(folder), allowed=[str(folder)])
    (second,) = cache_folder().glob("*.safetensors")         # the old one's name is gone
    assert second != first


def test_a_model_whose_files_changed_on_disk_is_read_again_on_its_next_use(tmp_path,
                                                                           monkeypatch):
    from safetensors.numpy import load_file, save_file

    from xattn.live import models

    folder = tmp_path / "model"
    folder.mkdir()
    for f in SHIPPED_FOLDER.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    monkeypatch.setenv("XATTN_MODELS", str(folder))
    models._models().clear()
    try:
        first = models.loaded_model(str(folder))
        assert models.loaded_model(str(folder)) is first      # kept while unchanged
        tensors = {k: np.ascontiguousarray(v * 2) for k, v in
                   load_file(folder / "model.safetensors").items()}
        save_file(tensors, folder / "new.tmp")
        os.replace(folder / "new.tmp", folder / "model.safetensors")    # a deployer's update
        second = models.loaded_model(str(folder))
        assert second is not first
        np.testing.assert_allclose(second.lm_head, 2 * first.lm_head)
        assert models.loaded_model(str(folder)) is second
    finally:
        models._models().clear()


def test_a_model_refused_for_a_truncated_file_loads_once_valid_weights_are_back(tmp_path,
                                                                                monkeypatch):
    """A failure is remembered for RETRY_AFTER seconds only while the folder's files stay as
    they failed: valid weights copied back are read on the next use, without a restart."""
    from xattn.live import models

    folder = tmp_path / "model"
    folder.mkdir()
    for f in SHIPPED_FOLDER.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    good = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(good[: len(good) // 3])     # cut mid-copy
    monkeypatch.setenv("XATTN_MODELS", str(folder))
    monkeypatch.setattr(models, "RETRY_AFTER", 3600.0)
    models._models().clear()
    try:
        failed = models.loaded_model(str(folder))
        assert isinstance(failed, str) and "model.safetensors" in failed
        assert models.loaded_model(str(folder)) == failed     # remembered ...
        new = folder / "model.safetensors.new"
        new.write_bytes(good)
        os.replace(new, folder / "model.safetensors")                      # ... until fixed
        loaded = models.loaded_model(str(folder))
        assert not isinstance(loaded, str)
        assert models.loaded_model(str(folder)) is loaded
    finally:
        models._models().clear()

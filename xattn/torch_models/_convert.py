"""``python -m xattn.torch_models convert NAME DIR``: a checkpoint as a folder NumPy can read.

For checkpoints that only have pickled weights (``pytorch_model.bin``, which the NumPy models
never open): run once where torch, transformers and the Hugging Face hub are available; the
server then loads DIR with ``xattn.encdec.load_encdec`` (NumPy only). A Marian DIR gets
``config.json`` (every field), ``model.safetensors`` (transformers' tensor names; tied matrices
once; no position tables, which are computed), and the tokenizer's ``source.spm``,
``target.spm`` and ``vocab.json``; another family's, what ``save_pretrained`` writes. Every
file is readable by all (0644: a server may run as another user). The conversion is checked:
DIR read back by transformers gives the checkpoint's logits on one sentence (the NumPy models
equal transformers' on their own tests).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from xattn._checks import quote

__all__ = ["convert", "write_folder", "FILE_MODE"]

FILE_MODE = 0o644     # readable by a server that runs as another user (not the umask's 0600)


def _same(a, b) -> bool:
    return a.data_ptr() == b.data_ptr() and a.shape == b.shape


def model_tensors(model, dtype: str = "float32") -> dict[str, np.ndarray]:
    """A MarianMTModel's tensors as NumPy arrays under transformers' names.

    The embeddings are written once when tied (``model.shared.weight``), else per side;
    ``lm_head.weight`` only when the config does not tie it. Matrices in ``dtype``; vectors
    and ``final_logits_bias`` in float32.
    """
    if dtype not in ("float32", "float16"):
        raise ValueError(f"dtype must be 'float32' or 'float16'; received {quote(dtype)}.")
    embeddings = ("model.shared.weight", "model.encoder.embed_tokens.weight",
                  "model.decoder.embed_tokens.weight", "lm_head.weight")
    tensors = {k: v for k, v in model.state_dict().items()
               if "embed_positions" not in k and k not in embeddings}
    enc = model.get_encoder().embed_tokens.weight
    dec = model.get_decoder().embed_tokens.weight
    if _same(enc, dec):
        tensors["model.shared.weight"] = enc
    else:
        tensors["model.encoder.embed_tokens.weight"] = enc
        tensors["model.decoder.embed_tokens.weight"] = dec
    if not model.config.tie_word_embeddings:
        tensors["lm_head.weight"] = model.lm_head.weight
    out = {}
    for name, t in tensors.items():
        a = t.detach().cpu().float().numpy()
        matrix = a.ndim == 2 and name != "final_logits_bias"
        out[name] = np.ascontiguousarray(a.astype(np.float16) if matrix and
                                         dtype == "float16" else a)
    return out


def _new_folder(folder) -> Path:
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ValueError(f"{quote(str(folder))} exists and is not an empty folder; give a new "
                         f"or empty folder.")
    return folder


def write_folder(model, folder, *, dtype: str = "float32") -> Path:
    """``config.json`` and ``model.safetensors`` of a MarianMTModel in ``folder`` (created;
    it must be new or empty). The tokenizer's files are the caller's to add."""
    from safetensors.numpy import save_file

    if getattr(model.config, "model_type", None) != "marian":
        raise ValueError(f"only Marian models (opus-mt and the like) run in NumPy; received "
                         f"model_type {quote(getattr(model.config, 'model_type', None))}.")
    folder = _new_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = model.config.to_dict()
    (folder / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True,
                                                   default=str) + "\n", encoding="utf-8")
    save_file(model_tensors(model, dtype), str(folder / "model.safetensors"),
              metadata={"format": "np", "written_by": "xattn.torch_models convert"})
    readable(folder)
    return folder


def readable(folder) -> None:
    """Every file of ``folder`` readable by all (``FILE_MODE``), the folder listable."""
    folder = Path(folder)
    os.chmod(folder, 0o755)
    for path in folder.iterdir():
        if path.is_file() and not path.is_symlink():
            os.chmod(path, FILE_MODE)


def convert(name: str, folder, *, dtype: str = "float32", allowed=None) -> tuple[Path, float]:
    """Load ``name`` with transformers (allow-list rules of ``load_model``) and write ``folder``
    as safetensors: a Marian checkpoint as ``write_folder`` writes it (with its sentencepiece
    files), any other as transformers' ``save_pretrained`` (the NumPy models read BART,
    mBART, M2M100, NLLB and T5 folders as they are). For checkpoints that only have pickled
    weights: a Hub folder with ``model.safetensors`` needs no conversion.

    Returns
    -------
    folder : Path
    max_diff : float
        Largest absolute difference of the logits of one test sentence: the checkpoint against
        ``folder`` read back by transformers.
    """
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from xattn.torch_models._loading import load_model

    _new_folder(folder)                   # before a download, not after
    if dtype not in ("float32", "float16"):
        raise ValueError(f"dtype must be 'float32' or 'float16'; received {quote(dtype)}.")
    loaded = load_model(name, allowed=allowed)
    if type(loaded.tokenizer).__name__ == "MarianTokenizer":
        folder = write_folder(loaded.model, folder, dtype=dtype)
        loaded.tokenizer.save_vocabulary(str(folder))
    else:
        folder = Path(folder)
        model = loaded.model if dtype == "float32" else \
            AutoModelForSeq2SeqLM.from_pretrained(name, dtype=torch.float16)
        model.save_pretrained(folder)
        loaded.tokenizer.save_pretrained(folder)
    readable(folder)
    src, tgt = loaded.tokenize("The cat sat on the mat."), loaded.tokenize("Le chat.", "target")
    back = AutoModelForSeq2SeqLM.from_pretrained(folder).float().eval()
    with torch.no_grad():
        logits = [m(input_ids=torch.tensor([src]), labels=torch.tensor([tgt])).logits[0]
                  for m in (loaded.model, back)]
    return folder, float(np.abs(logits[0].float().numpy() - logits[1].float().numpy()).max())

"""Reading a Marian model's weights without torch: ``model.safetensors`` through NumPy.

The tensors keep transformers' names (``model.decoder.layers.0.encoder_attn.q_proj.weight``),
so a transformers ``save_pretrained`` folder and one written by ``python -m xattn.models
convert`` read the same way. Each tensor the config asks for must be there with its shape;
anything else (another architecture's tensors) is refused. Pickle files (``pytorch_model.bin``)
are never opened: unpickling runs whatever code the file names.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from xattn._checks import quote
from xattn.marian.config import MarianConfig

__all__ = ["WEIGHTS_FILE", "PICKLE_FILES", "read_tensors", "embedding_names", "check_tensors"]

WEIGHTS_FILE = "model.safetensors"
_INDEX_FILE = "model.safetensors.index.json"    # a sharded checkpoint: the shards it names
PICKLE_FILES = ("pytorch_model.bin", "model.bin", "model.pt", "model.pth", "model.ckpt")
_DTYPES = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16)}
# Computed from the config, or aliases of tensors read under another name: never needed.
_IGNORED = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")


def _convert_hint() -> str:
    return ("Convert the checkpoint once where torch is installed: python -m xattn.models "
            "convert NAME DIR")


def read_tensors(folder: Path, dtype: str = "float32") -> dict[str, np.ndarray]:
    """Every tensor of ``folder``'s safetensors file(s), matrices stored as ``dtype``.

    Vectors (biases, LayerNorm, ``final_logits_bias``) stay float32 whatever ``dtype``: they
    are small, and float16 would round them for nothing.

    Raises
    ------
    ValueError
        No safetensors file (a pickle-based file is named and refused), or a file that is not
        safetensors.
    """
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be 'float32' or 'float16'; received {quote(dtype)}.")
    if (folder / WEIGHTS_FILE).is_file():
        files = [folder / WEIGHTS_FILE]
    elif (folder / _INDEX_FILE).is_file():
        files = _shards(folder)
    else:
        pickles = [name for name in PICKLE_FILES if (folder / name).exists()]
        if pickles:
            raise ValueError(f"{folder} holds {pickles[0]}, a pickle-based PyTorch file, which "
                             f"is refused: loading it would run any code it names. Give a "
                             f"folder with {WEIGHTS_FILE}. {_convert_hint()}.")
        raise ValueError(f"{folder} has no {WEIGHTS_FILE}. {_convert_hint()}.")
    tensors = {}
    for file in files:
        tensors.update(_read_file(file, _DTYPES[dtype]))
    return tensors


def _read_file(file: Path, dtype: np.dtype) -> dict[str, np.ndarray]:
    """safetensors' NumPy reader, one tensor at a time: a cast to float16 never holds the
    whole model twice (``safetensors.numpy.load_file`` would read every tensor first)."""
    from safetensors import SafetensorError, safe_open

    out = {}
    try:
        with safe_open(file, framework="np") as f:
            for name in f.keys():  # noqa: SIM118 (a safe_open handle is not a dict)
                a = f.get_tensor(name)
                if a.dtype.kind != "f":
                    raise ValueError(f"{file}: tensor {name} must hold floats; received "
                                     f"dtype {a.dtype}.")
                want = dtype if a.ndim == 2 and name != "final_logits_bias" else np.dtype(
                    np.float32)
                out[name] = a if a.dtype == want else a.astype(want)
    except (SafetensorError, OSError) as err:
        raise ValueError(f"{file} is not a readable safetensors file: "
                         f"{str(err).strip()[:160]}") from None
    return out


def _shards(folder: Path) -> list[Path]:
    try:
        weight_map = json.loads((folder / _INDEX_FILE).read_text(encoding="utf-8"))["weight_map"]
        names = sorted(set(weight_map.values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"{folder / _INDEX_FILE} is not a safetensors index: {err}") from None
    bad = [n for n in names if not isinstance(n, str) or Path(n).name != n
           or not n.endswith(".safetensors")]
    if bad:
        raise ValueError(f"{folder / _INDEX_FILE} names a shard outside the folder or not in "
                         f"safetensors format: {quote(bad[0])}.")
    return [folder / n for n in names]


def embedding_names(config: MarianConfig, names) -> tuple[str, str, str]:
    """The tensors holding the encoder's and decoder's token embeddings and ``lm_head``.

    transformers 5 saves one ``model.shared.weight`` when everything is tied, and the
    per-side matrices (plus ``lm_head.weight`` when untied) otherwise; a per-side matrix, when
    present, is the one the model uses.
    """
    names = set(names)
    enc, dec = ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight")
    enc = enc if enc in names else "model.shared.weight"
    dec = dec if dec in names else "model.shared.weight"
    return enc, dec, (dec if config.tie_word_embeddings else "lm_head.weight")


def expected_shapes(config: MarianConfig, names) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor the model reads."""
    c, d = config, config.d_model
    enc, dec, lm_head = embedding_names(c, names)
    shapes = {enc: (c.vocab_size, d), dec: (c.decoder_vocab_size, d),
              lm_head: (c.decoder_vocab_size, d), "final_logits_bias": (1, c.decoder_vocab_size)}
    for side, n_layers, ffn in (("encoder", c.encoder_layers, c.encoder_ffn_dim),
                                ("decoder", c.decoder_layers, c.decoder_ffn_dim)):
        blocks = ("self_attn", "encoder_attn") if side == "decoder" else ("self_attn",)
        for i in range(n_layers):
            p = f"model.{side}.layers.{i}."
            for block in blocks:
                for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    shapes[f"{p}{block}.{proj}.weight"] = (d, d)
                    shapes[f"{p}{block}.{proj}.bias"] = (d,)
            for norm in (*(f"{b}_layer_norm" for b in blocks), "final_layer_norm"):
                shapes[f"{p}{norm}.weight"] = shapes[f"{p}{norm}.bias"] = (d,)
            shapes.update({f"{p}fc1.weight": (ffn, d), f"{p}fc1.bias": (ffn,),
                           f"{p}fc2.weight": (d, ffn), f"{p}fc2.bias": (d,)})
    if c.vocab_size != c.decoder_vocab_size and enc == dec:
        raise ValueError(f"vocab_size={c.vocab_size} and decoder_vocab_size="
                         f"{c.decoder_vocab_size} differ, but the file has one shared embedding "
                         f"matrix (model.shared.weight) for both sides.")
    return shapes


def check_tensors(tensors: dict, config: MarianConfig, file: str = WEIGHTS_FILE) -> None:
    """Every expected tensor present with its shape, and nothing of another architecture.

    Raises
    ------
    ValueError
        Naming the tensor, the expected shape and the received one.
    """
    shapes = expected_shapes(config, tensors)
    for name, shape in shapes.items():
        if name not in tensors:
            raise ValueError(f"{file} has no tensor {name}; expected one of shape "
                             f"{shape} for this config.json (d_model={config.d_model}, "
                             f"{config.encoder_layers}+{config.decoder_layers} layers).")
        if tensors[name].shape != shape:
            raise ValueError(f"{file}: tensor {name} must have shape {shape} for this "
                             f"config.json; received shape {tuple(tensors[name].shape)}.")
    aliases = {"model.shared.weight", "model.encoder.embed_tokens.weight",
               "model.decoder.embed_tokens.weight", "lm_head.weight", *_IGNORED}
    unexpected = sorted(n for n in tensors if n not in shapes and n not in aliases)
    if unexpected:
        raise ValueError(f"{file} holds tensors a Marian model does not have, e.g. "
                         f"{quote(unexpected[0])} ({len(unexpected)} in all): not a Marian "
                         f"checkpoint, or a config.json that does not match it.")

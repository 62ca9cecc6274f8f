"""An encoder-decoder's weights read without torch: ``model.safetensors`` memory-mapped, every
tensor the config asks for found by its transformers name and checked against its shape.

The tensors keep transformers' names, so a ``save_pretrained`` folder, a Hub folder and one
written by ``python -m xattn.torch_models convert`` read the same way. `names` says, per family's
naming (``Family.names``), which tensor fills each part of the model; anything else (another
architecture's tensors) is refused. The sizes ``config.json`` declares are bounded by the
tensors present before anything is built from them, so a config that claims a billion layers
is refused at once. Pickle files (``pytorch_model.bin``) are never opened: unpickling runs
whatever code the file names.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xattn._checks import quote
from xattn._floats import STORED, to_float32
from xattn.attention import MultiHeadCrossAttention
from xattn.encdec.config import ModelConfig
from xattn.encdec.files import present, read_json
from xattn.encdec.layers import DecoderLayer, EncoderLayer, Linear
from xattn.encdec.tensorfile import TensorInfo, map_tensors, read_header

__all__ = ["WEIGHTS_FILE", "INDEX_FILE", "PICKLE_FILES", "weight_files", "read_tensors",
           "names", "expected_shapes", "check_tensors", "build_layer"]

WEIGHTS_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"    # a sharded checkpoint: the shards it names
PICKLE_FILES = ("pytorch_model.bin", "model.bin", "model.pt", "model.pth", "model.ckpt")
_STORAGE = {"float32": None, "float16": np.dtype(np.float16)}
_INDEX_BYTES = 16 << 20
# Tensors a checkpoint may hold that the model computes or reads under another name.
_IGNORED = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight",
            "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight")


def _convert_hint() -> str:
    return ("Convert the checkpoint once where torch is installed: python -m xattn.torch_models "
            "convert NAME DIR")


def weight_files(folder: Path) -> list[Path]:
    """The safetensors file(s) of ``folder``: ``model.safetensors`` or the shards its index
    names (in the folder only); a pickle-based file is named and refused."""
    if present(folder / WEIGHTS_FILE):
        return [folder / WEIGHTS_FILE]
    if present(folder / INDEX_FILE):
        index = read_json(folder / INDEX_FILE, _INDEX_BYTES)
        weight_map = index.get("weight_map")
        if not isinstance(weight_map, dict):
            raise ValueError(f"{INDEX_FILE} has no weight_map object: not a safetensors index.")
        shards = sorted(set(weight_map.values()), key=str)
        bad = [n for n in shards if not isinstance(n, str) or Path(n).name != n
               or not n.endswith(".safetensors")]
        if bad:
            raise ValueError(f"{INDEX_FILE} names a shard outside the folder or not in "
                             f"safetensors format: {quote(bad[0])}.")
        return [folder / n for n in shards]
    pickles = [name for name in PICKLE_FILES if (folder / name).exists()]
    if pickles:
        raise ValueError(f"{folder} holds {pickles[0]}, a pickle-based PyTorch file, which is "
                         f"refused: loading it would run any code it names. Give a folder with "
                         f"{WEIGHTS_FILE}. {_convert_hint()}.")
    raise ValueError(f"{folder} has no {WEIGHTS_FILE}. {_convert_hint()}.")


def headers(files: list[Path]) -> dict[str, TensorInfo]:
    """Every tensor the files declare (nothing mapped yet)."""
    out = {}
    for file in files:
        out.update(read_header(file))
    return out


def read_tensors(files: list[Path], dtype: str = "float32") -> dict[str, np.ndarray]:
    """Every tensor of ``files``, memory-mapped as stored (float32, float16, bfloat16).

    ``dtype="float16"`` stores float32 matrices as float16 instead (a private copy, half the
    memory); vectors (biases, norms, ``final_logits_bias``) stay float32 whatever the file:
    they are small, and rounding them gains nothing.
    """
    if dtype not in _STORAGE:
        raise ValueError(f"dtype must be 'float32' or 'float16'; received {quote(dtype)}.")
    out = {}
    for file in files:
        for name, a in map_tensors(file).items():
            if a.dtype not in STORED:
                raise ValueError(f"{file.name}: tensor {name} must hold floats; received "
                                 f"dtype {a.dtype}.")
            if a.ndim != 2 or name == "final_logits_bias":
                a = to_float32(a)                   # a view when stored as float32
            elif _STORAGE[dtype] is not None and a.dtype == np.float32:
                a = a.astype(_STORAGE[dtype])
            out[name] = a
    return out


def names(config: ModelConfig, present) -> dict[str, str]:
    """Part of the model -> the tensor that holds it, for this config and file.

    Parts: ``embed.encoder``, ``embed.decoder``, ``lm_head``, ``logits_bias``,
    ``positions.<side>``, ``embedding_norm.<side>.<w|b>``, ``final_norm.<side>.<w|b>``,
    ``relative_bias.<side>``, and per layer ``<side>.<i>.<block>.<q|k|v|o>.<w|b>``,
    ``<side>.<i>.<block>_norm.<w|b>``, ``<side>.<i>.<fc1|fc1_linear|fc2>.<w|b>``,
    ``<side>.<i>.final_norm.<w|b>`` (block: ``self_attn``, ``encoder_attn``).
    """
    f, present = config.family, set(present)
    t5 = f.names == "t5"
    shared = "shared.weight" if t5 else "model.shared.weight"
    out = {}
    for side in ("encoder", "decoder"):
        own = f"{side}.embed_tokens.weight" if t5 else f"model.{side}.embed_tokens.weight"
        out[f"embed.{side}"] = own if own in present and (not t5 or shared not in present) \
            else shared
        if f.positions == "learned":
            out[f"positions.{side}"] = f"model.{side}.embed_positions.weight"
        if f.positions == "relative":
            out[f"relative_bias.{side}"] = \
                f"{side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
        for part, name, on in (("embedding_norm", "layernorm_embedding", f.embedding_norm),
                               ("final_norm", "final_layer_norm" if t5 else "layer_norm",
                                f.final_norm)):
            if on:
                out.update(_norm(f"{part}.{side}", f"{side}.{name}" if t5 else
                                 f"model.{side}.{name}", f.biases))
        n_layers = getattr(config, f"{side}_layers")
        for i in range(n_layers):
            out.update(_t5_layer(side, i, config) if t5 else _bart_layer(side, i, config))
    out["lm_head"] = "lm_head.weight" if "lm_head.weight" in present else out["embed.decoder"]
    if f.logits_bias:
        out["logits_bias"] = "final_logits_bias"
    return out


def _norm(part: str, prefix: str, bias: bool) -> dict:
    return {f"{part}.w": f"{prefix}.weight", **({f"{part}.b": f"{prefix}.bias"} if bias else {})}


def _bart_layer(side: str, i: int, config: ModelConfig) -> dict:
    p, out = f"model.{side}.layers.{i}.", {}
    for block in ("self_attn", "encoder_attn") if side == "decoder" else ("self_attn",):
        for x, proj in zip("qkvo", ("q_proj", "k_proj", "v_proj", "out_proj"), strict=True):
            out.update({f"{side}.{i}.{block}.{x}.w": f"{p}{block}.{proj}.weight",
                        f"{side}.{i}.{block}.{x}.b": f"{p}{block}.{proj}.bias"})
        out.update(_norm(f"{side}.{i}.{block}_norm", f"{p}{block}_layer_norm", True))
    for fc in ("fc1", "fc2"):
        out.update({f"{side}.{i}.{fc}.w": f"{p}{fc}.weight", f"{side}.{i}.{fc}.b": f"{p}{fc}.bias"})
    out.update(_norm(f"{side}.{i}.final_norm", f"{p}final_layer_norm", True))
    return out


def _t5_layer(side: str, i: int, config: ModelConfig) -> dict:
    p = f"{side}.block.{i}.layer."
    blocks = (("self_attn", "0.SelfAttention"),) + (
        (("encoder_attn", "1.EncDecAttention"),) if side == "decoder" else ())
    out = {}
    for block, name in blocks:
        out.update({f"{side}.{i}.{block}.{x}.w": f"{p}{name}.{x}.weight" for x in "qkvo"})
        out[f"{side}.{i}.{block}_norm.w"] = f"{p}{name.split('.')[0]}.layer_norm.weight"
    ff = f"{p}{len(blocks)}."
    fc1 = (("fc1", "wi_0"), ("fc1_linear", "wi_1")) if config.gated_ffn else (("fc1", "wi"),)
    for part, name in (*fc1, ("fc2", "wo")):
        out[f"{side}.{i}.{part}.w"] = f"{ff}DenseReluDense.{name}.weight"
    out[f"{side}.{i}.final_norm.w"] = f"{ff}layer_norm.weight"
    return out


def expected_shapes(config: ModelConfig, parts: dict[str, str]) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape for every part ``names`` gives."""
    c, d = config, config.d_model
    inner = {"encoder": c.encoder_attention_heads * c.d_kv if c.family.names == "t5" else d,
             "decoder": c.decoder_attention_heads * c.d_kv if c.family.names == "t5" else d}
    shapes = {}
    for part, name in parts.items():
        key = part.split(".")
        side = key[1] if key[0] in ("embed", "positions", "relative_bias", "embedding_norm",
                                    "final_norm") else key[0]
        ffn = getattr(c, f"{side}_ffn_dim", 0)
        shape = {"embed": (c.vocab_size if side == "encoder" else c.decoder_vocab_size, d),
                 "lm_head": (c.decoder_vocab_size, d), "logits_bias": (1, c.decoder_vocab_size),
                 "positions": (c.max_position_embeddings + 2, d),
                 "relative_bias": (c.relative_attention_num_buckets,
                                   getattr(c, f"{side}_attention_heads", 0))}.get(key[0])
        if shape is None:
            what, kind = key[-2], key[-1]
            if what in "qkv":
                shape = (inner[side], d) if kind == "w" else (inner[side],)
            elif what == "o":
                shape = (d, inner[side]) if kind == "w" else (d,)
            elif what in ("fc1", "fc1_linear"):
                shape = (ffn, d) if kind == "w" else (ffn,)
            elif what == "fc2":
                shape = (d, ffn) if kind == "w" else (d,)
            else:                                                       # a norm
                shape = (d,)
        if shapes.get(name, shape) != shape:
            raise ValueError(f"vocab_size={c.vocab_size} and decoder_vocab_size="
                             f"{c.decoder_vocab_size} differ, but the file has one shared "
                             f"embedding matrix ({name}) for both sides.")
        shapes[name] = shape
    return shapes


def bound_sizes(config: ModelConfig, infos: dict[str, TensorInfo], file: str) -> None:
    """Refuse sizes ``config.json`` declares beyond what the weights could hold, before
    anything is built from them (a billion layers would take hours to list)."""
    n = len(infos)
    for side in ("encoder", "decoder"):
        layers = getattr(config, f"{side}_layers")
        if layers > n:
            raise ValueError(f"config.json declares {side}_layers = {layers}, but {file} holds "
                             f"{n} tensors in all: the config does not describe these weights.")


def check_tensors(tensors: dict, config: ModelConfig, file: str = WEIGHTS_FILE) -> dict:
    """Every part's tensor present with its shape, and nothing of another architecture;
    returns ``names`` (part -> tensor).

    Raises
    ------
    ValueError
        Naming the tensor, the expected shape and the received one.
    """
    parts = names(config, tensors)
    shapes = expected_shapes(config, parts)
    for name, shape in shapes.items():
        if name not in tensors:
            raise ValueError(f"{file} has no tensor {name}; expected one of shape "
                             f"{shape} for this config.json ({config.model_type}, d_model="
                             f"{config.d_model}, {config.encoder_layers}+"
                             f"{config.decoder_layers} layers).")
        if tuple(tensors[name].shape) != shape:
            raise ValueError(f"{file}: tensor {name} must have shape {shape} for this "
                             f"config.json; received shape {tuple(tensors[name].shape)}.")
    aliases = {"model.shared.weight", "shared.weight", "lm_head.weight", *_IGNORED,
               *(f"{p}{s}.embed_tokens.weight" for p in ("", "model.")
                 for s in ("encoder", "decoder"))}
    unexpected = sorted(n for n in tensors if n not in shapes and n not in aliases)
    if unexpected:
        raise ValueError(f"{file} holds tensors a {config.model_type} model does not have, "
                         f"e.g. {quote(unexpected[0])} ({len(unexpected)} in all): another "
                         f"architecture, or a config.json that does not match it.")
    return parts


def build_layer(t, norm_of, side: str, i: int, c: ModelConfig):
    """One layer's parameters from the parts ``t(part)`` of ``side``'s layer ``i``."""
    p = f"{side}.{i}."
    scaling = None if c.family.scaled_scores else 1.0

    def attn(block: str, heads: int) -> MultiHeadCrossAttention:
        w = [t(f"{p}{block}.{x}.w").T for x in "qkvo"]                     # (in, out) views
        b = [None if t(f"{p}{block}.{x}.b") is None else to_float32(t(f"{p}{block}.{x}.b"))
             for x in "qkvo"]
        return MultiHeadCrossAttention.from_weights(*w, n_heads=heads, b_Q=b[0], b_K=b[1],
                                                    b_V=b[2], b_O=b[3], dtype=np.float32,
                                                    scaling=scaling)

    def fc(name: str) -> Linear | None:
        w = t(f"{p}{name}.w")
        bias = t(f"{p}{name}.b")
        return None if w is None else Linear(w, None if bias is None else to_float32(bias))

    heads = getattr(c, f"{side}_attention_heads")
    ffn = (fc("fc1"), fc("fc1_linear"), fc("fc2"), norm_of(f"{p}final_norm"))
    if side == "encoder":
        return EncoderLayer(attn("self_attn", heads), norm_of(f"{p}self_attn_norm"), *ffn)
    return DecoderLayer(attn("self_attn", heads), norm_of(f"{p}self_attn_norm"),
                        attn("encoder_attn", heads), norm_of(f"{p}encoder_attn_norm"), *ffn)

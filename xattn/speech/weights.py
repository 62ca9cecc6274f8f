"""A Whisper checkpoint's tensors: every name the config implies, with its shape, checked
before any layer is built; the layers built from memory-mapped arrays (no copies).

Names are transformers' (``WhisperForConditionalGeneration``: ``model.encoder.conv1.weight``,
``model.decoder.layers.0.encoder_attn.k_proj.weight``, ...; a ``WhisperModel`` folder's lack
the ``model.`` prefix). ``k_proj`` has no bias, as in OpenAI's code. ``proj_out.weight`` is the
token embedding (tied) unless the file holds its own.
"""

from __future__ import annotations

import numpy as np

from xattn._checks import quote
from xattn._floats import to_float32
from xattn.attention import MultiHeadCrossAttention
from xattn.encdec.layers import DecoderLayer, EncoderLayer, Linear, Norm
from xattn.speech.config import WhisperConfig

__all__ = ["LAYER_NORM_EPS", "prefix", "expected_shapes", "check_tensors", "bound_sizes",
           "build_encoder_layer", "build_decoder_layer", "norm_of"]

LAYER_NORM_EPS = 1e-5          # nn.LayerNorm's default: Whisper's config has no field for it
_OPTIONAL = ("proj_out.weight",)


def prefix(tensors) -> str:
    """``"model."`` for a ``WhisperForConditionalGeneration`` file, ``""`` for a
    ``WhisperModel`` one."""
    return "" if "encoder.conv1.weight" in tensors and \
        "model.encoder.conv1.weight" not in tensors else "model."


def _attention(p: str, d: int, cross: bool = False) -> dict:
    out = {}
    for block in ("self_attn", "encoder_attn") if cross else ("self_attn",):
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out[f"{p}{block}.{proj}.weight"] = (d, d)
            if proj != "k_proj":
                out[f"{p}{block}.{proj}.bias"] = (d,)
        out.update({f"{p}{block}_layer_norm.weight": (d,), f"{p}{block}_layer_norm.bias": (d,)})
    return out


def _layer(p: str, d: int, ffn: int, cross: bool) -> dict:
    return {**_attention(p, d, cross), f"{p}fc1.weight": (ffn, d), f"{p}fc1.bias": (ffn,),
            f"{p}fc2.weight": (d, ffn), f"{p}fc2.bias": (d,),
            f"{p}final_layer_norm.weight": (d,), f"{p}final_layer_norm.bias": (d,)}


def expected_shapes(c: WhisperConfig, pre: str = "model.") -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape for every tensor the model reads (``proj_out`` aside)."""
    d, enc, dec = c.d_model, f"{pre}encoder.", f"{pre}decoder."
    shapes = {f"{enc}conv1.weight": (d, c.num_mel_bins, 3), f"{enc}conv1.bias": (d,),
              f"{enc}conv2.weight": (d, d, 3), f"{enc}conv2.bias": (d,),
              f"{enc}embed_positions.weight": (c.max_source_positions, d),
              f"{enc}layer_norm.weight": (d,), f"{enc}layer_norm.bias": (d,),
              f"{dec}embed_tokens.weight": (c.vocab_size, d),
              f"{dec}embed_positions.weight": (c.max_target_positions, d),
              f"{dec}layer_norm.weight": (d,), f"{dec}layer_norm.bias": (d,)}
    for i in range(c.encoder_layers):
        shapes.update(_layer(f"{enc}layers.{i}.", d, c.encoder_ffn_dim, cross=False))
    for i in range(c.decoder_layers):
        shapes.update(_layer(f"{dec}layers.{i}.", d, c.decoder_ffn_dim, cross=True))
    return shapes


def bound_sizes(c: WhisperConfig, n_tensors: int, file: str) -> None:
    """Refuse layer counts beyond what the file could hold, before listing their names."""
    for side in ("encoder", "decoder"):
        if getattr(c, f"{side}_layers") > n_tensors:
            raise ValueError(f"config.json declares {side}_layers = "
                             f"{getattr(c, f'{side}_layers')}, but {file} holds {n_tensors} "
                             f"tensors in all: the config does not describe these weights.")


def check_tensors(tensors: dict, c: WhisperConfig, file: str = "model.safetensors") -> str:
    """Every tensor present with its shape, nothing of another architecture; returns the
    names' prefix.

    Raises
    ------
    ValueError
        Naming the tensor, the expected shape and the received one.
    """
    pre = prefix(tensors)
    shapes = expected_shapes(c, pre)
    shapes.update({name: (c.vocab_size, c.d_model) for name in _OPTIONAL if name in tensors})
    for name, shape in shapes.items():
        if name not in tensors:
            raise ValueError(f"{file} has no tensor {name}; expected one of shape {shape} for "
                             f"this config.json (whisper, d_model={c.d_model}, "
                             f"{c.encoder_layers}+{c.decoder_layers} layers).")
        if tuple(tensors[name].shape) != shape:
            raise ValueError(f"{file}: tensor {name} must have shape {shape} for this "
                             f"config.json; received shape {tuple(tensors[name].shape)}.")
    wide = next((n for n in shapes if tensors[n].dtype != np.float32), None)
    if wide is not None:
        raise ValueError(f"{file}: tensor {wide} is stored as {tensors[wide].dtype}; Whisper "
                         f"runs here from float32 weights only. Save the model in float32 "
                         f"(model.float().save_pretrained(folder)).")
    unexpected = sorted(n for n in tensors if n not in shapes)
    if unexpected:
        raise ValueError(f"{file} holds tensors a whisper model does not have, e.g. "
                         f"{quote(unexpected[0])} ({len(unexpected)} in all): another "
                         f"architecture, or a config.json that does not match it.")
    return pre


def norm_of(tensors: dict, name: str) -> Norm:
    """The LayerNorm ``name`` (``name.weight``, ``name.bias``)."""
    return Norm(to_float32(tensors[f"{name}.weight"]), to_float32(tensors[f"{name}.bias"]),
                LAYER_NORM_EPS)


def _attn(tensors: dict, p: str, n_heads: int) -> MultiHeadCrossAttention:
    w = [tensors[f"{p}{proj}.weight"].T for proj in ("q_proj", "k_proj", "v_proj", "out_proj")]
    b = [None if proj == "k_proj" else to_float32(tensors[f"{p}{proj}.bias"])
         for proj in ("q_proj", "k_proj", "v_proj", "out_proj")]
    return MultiHeadCrossAttention.from_weights(*w, n_heads=n_heads, b_Q=b[0], b_K=None,
                                                b_V=b[2], b_O=b[3], dtype=np.float32)


def _linear(tensors: dict, name: str) -> Linear:
    return Linear(tensors[f"{name}.weight"], to_float32(tensors[f"{name}.bias"]))


def build_encoder_layer(tensors: dict, p: str, c: WhisperConfig) -> EncoderLayer:
    """Encoder layer at prefix ``p`` (``model.encoder.layers.0.``)."""
    return EncoderLayer(_attn(tensors, f"{p}self_attn.", c.encoder_attention_heads),
                        norm_of(tensors, f"{p}self_attn_layer_norm"), _linear(tensors, f"{p}fc1"),
                        None, _linear(tensors, f"{p}fc2"),
                        norm_of(tensors, f"{p}final_layer_norm"))


def build_decoder_layer(tensors: dict, p: str, c: WhisperConfig) -> DecoderLayer:
    """Decoder layer at prefix ``p`` (``model.decoder.layers.0.``)."""
    heads = c.decoder_attention_heads
    return DecoderLayer(_attn(tensors, f"{p}self_attn.", heads),
                        norm_of(tensors, f"{p}self_attn_layer_norm"),
                        _attn(tensors, f"{p}encoder_attn.", heads),
                        norm_of(tensors, f"{p}encoder_attn_layer_norm"),
                        _linear(tensors, f"{p}fc1"), None, _linear(tensors, f"{p}fc2"),
                        norm_of(tensors, f"{p}final_layer_norm"))

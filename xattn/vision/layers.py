"""A VisionEncoderDecoder's layers built from its tensors, named as transformers names them:
ViT's ``layernorm_before``, ``attention.attention.query``, ``intermediate.dense``,
``output.dense``, ``layernorm_after`` become this project's ``EncoderLayer`` (pre-norm, as
``xattn.encdec.layers.encoder_layer`` runs it); TrOCR's layers are BART's, post-norm, with
the decoder's cross-attention reading a source of its own width where the config says so.
Weights stay the mapped file's arrays (``weight.T`` is a view); vectors are read as float32.
"""

from __future__ import annotations

import numpy as np

from xattn._floats import to_float32
from xattn.attention import MultiHeadCrossAttention
from xattn.encdec.layers import DecoderLayer, EncoderLayer, Linear, Norm, activation
from xattn.vision.attention import WideSourceAttention
from xattn.vision.config import VisionConfig
from xattn.vision.gelu import gelu
from xattn.vision.weights import DEC, ENC

__all__ = ["DECODER_EPS", "Tensors", "act", "encoder_layer", "decoder_layer"]

DECODER_EPS = 1e-5       # TrOCR's nn.LayerNorm default
_PROJ = ("q_proj", "k_proj", "v_proj", "out_proj")
_VIT = ("attention.query", "attention.key", "attention.value", "output.dense")


def act(name: str):
    """transformers' ``ACT2FN[name]``; GELU in float32 (``xattn.vision.gelu``)."""
    return gelu if name == "gelu" else activation(name)


class Tensors:
    """The checked tensors of one file, read by name (``None`` for one the model lacks)."""

    def __init__(self, tensors: dict, shapes: dict) -> None:
        self.tensors, self.shapes = tensors, shapes

    def __call__(self, name: str):
        return self.tensors[name] if name in self.shapes else None

    def norm(self, prefix: str, eps: float) -> Norm:
        return Norm(to_float32(self(f"{prefix}.weight")), to_float32(self(f"{prefix}.bias")),
                    eps)

    def linear(self, prefix: str) -> Linear:
        return Linear(self(f"{prefix}.weight"), to_float32(self(f"{prefix}.bias")))

    def attention(self, prefix: str, names, heads: int, wide: bool = False):
        """Four torch Linears ``prefix + names[i]`` as one MultiHeadCrossAttention
        (``WideSourceAttention`` when ``wide``)."""
        w = [self(f"{prefix}{n}.weight").T for n in names]              # (in, out) views
        b = [None if self(f"{prefix}{n}.bias") is None else
             to_float32(self(f"{prefix}{n}.bias")) for n in names]
        make = WideSourceAttention.from_source_weights if wide else \
            MultiHeadCrossAttention.from_weights
        return make(*w, n_heads=heads, b_Q=b[0], b_K=b[1], b_V=b[2], b_O=b[3], dtype=np.float32)


def encoder_layer(t: Tensors, i: int, config: VisionConfig) -> EncoderLayer:
    """ViT/DeiT layer ``i``: ``layernorm_before``, attention, ``layernorm_after``, MLP."""
    e, p = config.encoder, f"{ENC}encoder.layer.{i}."
    return EncoderLayer(t.attention(f"{p}attention.", _VIT, e.num_attention_heads),
                        t.norm(f"{p}layernorm_before", e.layer_norm_eps),
                        t.linear(f"{p}intermediate.dense"), None, t.linear(f"{p}output.dense"),
                        t.norm(f"{p}layernorm_after", e.layer_norm_eps))


def decoder_layer(t: Tensors, i: int, config: VisionConfig) -> DecoderLayer:
    """TrOCR layer ``i``: ``self_attn``, ``encoder_attn`` (from ``source_width`` features),
    ``fc1``/``fc2``, a LayerNorm after each."""
    c, p = config.decoder, f"{DEC}layers.{i}."
    wide = config.source_width != c.d_model
    return DecoderLayer(
        t.attention(f"{p}self_attn.", _PROJ, c.decoder_attention_heads),
        t.norm(f"{p}self_attn_layer_norm", DECODER_EPS),
        t.attention(f"{p}encoder_attn.", _PROJ, c.decoder_attention_heads, wide),
        t.norm(f"{p}encoder_attn_layer_norm", DECODER_EPS),
        t.linear(f"{p}fc1"), None, t.linear(f"{p}fc2"),
        t.norm(f"{p}final_layer_norm", DECODER_EPS))

"""The configuration of a Marian translation model, read from its ``config.json``.

The fields and their defaults are those of transformers' ``MarianConfig`` (5.x) that change
what the model computes; the rest of a ``config.json`` (dropout, generation settings, ...) is
ignored. Every field is checked where it is read, so a wrong file fails here, not in a matmul.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

from xattn._checks import quote

__all__ = ["MarianConfig", "ACTIVATIONS", "read_config"]

# transformers' ACT2FN names that Marian-family checkpoints use; see layers.activation.
ACTIVATIONS = ("swish", "silu", "gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "tanh")


@dataclass(frozen=True)
class MarianConfig:
    """What a Marian encoder-decoder computes (the names of transformers' ``MarianConfig``).

    Attributes
    ----------
    vocab_size : int
        Source (and, when shared, target) vocabulary: rows of the encoder's embeddings.
    decoder_vocab_size : int
        Target vocabulary: rows of the decoder's embeddings and of the logits.
    d_model : int
    encoder_layers, decoder_layers : int
    encoder_attention_heads, decoder_attention_heads : int
        Must divide ``d_model``.
    encoder_ffn_dim, decoder_ffn_dim : int
        Width of ``fc1``'s output in each layer's feed-forward block.
    max_position_embeddings : int
        Longest sentence, in pieces, on either side (sinusoidal positions beyond it are not
        defined for this model).
    activation_function : str
        One of ``ACTIVATIONS``; opus-mt uses ``"swish"``.
    scale_embedding : bool
        Multiply token embeddings by sqrt(d_model) (opus-mt: True).
    pad_token_id, eos_token_id, decoder_start_token_id : int
        opus-mt starts decoding from ``<pad>`` and stops at ``</s>``.
    share_encoder_decoder_embeddings, tie_word_embeddings : bool
        Whether both sides read one embedding matrix, and whether the output projection
        (``lm_head``) is the decoder's embedding matrix.
    """

    vocab_size: int = 58101
    decoder_vocab_size: int = 0          # 0: the same as vocab_size (as transformers does)
    d_model: int = 1024
    encoder_layers: int = 12
    decoder_layers: int = 12
    encoder_attention_heads: int = 16
    decoder_attention_heads: int = 16
    encoder_ffn_dim: int = 4096
    decoder_ffn_dim: int = 4096
    max_position_embeddings: int = 1024
    activation_function: str = "gelu"
    scale_embedding: bool = False
    pad_token_id: int = 58100
    eos_token_id: int = 0
    decoder_start_token_id: int = 58100
    share_encoder_decoder_embeddings: bool = True
    tie_word_embeddings: bool = True

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            kind = type(f.default)
            if type(value) is not kind:      # a bool is not an int, and 512.0 is not 512
                raise ValueError(f"config.json: {f.name} must be {kind.__name__}; received "
                                 f"{type(value).__name__} {quote(value)}.")
            if kind is int and value < (0 if f.name.endswith("_id") or f.name ==
                                        "decoder_vocab_size" else 1):
                raise ValueError(f"config.json: {f.name} must be >= 1; received {value}.")
        if not self.decoder_vocab_size:
            object.__setattr__(self, "decoder_vocab_size", self.vocab_size)
        for side in ("encoder", "decoder"):
            heads = getattr(self, f"{side}_attention_heads")
            if self.d_model % heads:
                raise ValueError(f"config.json: {side}_attention_heads must divide d_model="
                                 f"{self.d_model}; received {heads}.")
        if self.activation_function not in ACTIVATIONS:
            raise ValueError(f"config.json: activation_function must be one of "
                             f"{', '.join(ACTIVATIONS)}; received "
                             f"{quote(self.activation_function)}.")
        for name in ("pad_token_id", "eos_token_id", "decoder_start_token_id"):
            if getattr(self, name) >= self.decoder_vocab_size:
                raise ValueError(f"config.json: {name} must be below decoder_vocab_size="
                                 f"{self.decoder_vocab_size}; received {getattr(self, name)}.")

    @property
    def d_head(self) -> int:
        return self.d_model // self.decoder_attention_heads

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def read_config(path) -> MarianConfig:
    """``MarianConfig`` from a ``config.json`` (transformers' or ``convert``'s).

    Raises
    ------
    ValueError
        Not JSON, not a Marian (``model_type``), or a field of the wrong type or range.
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a readable JSON file: {err}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path} must hold a JSON object; received {type(raw).__name__}.")
    if raw.get("model_type", "marian") != "marian":
        raise ValueError(f"{path}: model_type must be 'marian' (this NumPy model runs Marian "
                         f"checkpoints such as opus-mt); received {quote(raw['model_type'])}.")
    known = {f.name for f in fields(MarianConfig)}
    values = {k: v for k, v in raw.items() if k in known and v is not None}
    if isinstance(values.get("eos_token_id"), list) and len(values["eos_token_id"]) == 1:
        values["eos_token_id"] = values["eos_token_id"][0]
    return MarianConfig(**values)

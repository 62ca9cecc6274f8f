"""What a VisionEncoderDecoder computes, read from its ``config.json`` (a Hugging Face folder as
it is): a ViT or DeiT image encoder and a TrOCR text decoder.

transformers nests the two configs (``"encoder": {...}, "decoder": {...}``) under
``model_type: "vision-encoder-decoder"``. Only the fields that change the numbers are read,
each checked where it is read, so a wrong file fails here, not in a matmul; the rest (dropout,
generation settings) is ignored. Other pairs a VisionEncoderDecoder may hold (Swin + BART as
in Donut, ViT + GPT-2 as in vit-gpt2 captioning) are refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from xattn._checks import quote
from xattn.encdec.files import read_json
from xattn.encdec.layers import ACTIVATIONS

__all__ = ["ENCODERS", "ImageEncoderConfig", "TextDecoderConfig", "VisionConfig",
           "read_vision_config"]

CONFIG_BYTES = 1 << 20
ENCODERS = {"vit": 1, "deit": 2}      # model_type -> tokens before the patches (CLS, distillation)


@dataclass(frozen=True)
class ImageEncoderConfig:
    """The ViT/DeiT encoder: pre-norm layers over ``n_special`` tokens and the patches.

    ``image_size`` and ``patch_size`` are (height, width); the patches form a grid of
    ``image_size // patch_size``.
    """

    model_type: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    hidden_act: str
    layer_norm_eps: float
    image_size: tuple[int, int]
    patch_size: tuple[int, int]
    num_channels: int
    qkv_bias: bool

    @property
    def n_special(self) -> int:
        """Tokens before the patches: CLS (ViT), CLS and distillation (DeiT)."""
        return ENCODERS[self.model_type]

    @property
    def grid(self) -> tuple[int, int]:
        """Patches per column and per row, (rows, columns)."""
        return (self.image_size[0] // self.patch_size[0], self.image_size[1] // self.patch_size[1])

    @property
    def n_positions(self) -> int:
        rows, cols = self.grid
        return self.n_special + rows * cols


@dataclass(frozen=True)
class TextDecoderConfig:
    """The TrOCR decoder: post-norm layers, learned or sinusoidal positions."""

    d_model: int
    decoder_layers: int
    decoder_attention_heads: int
    decoder_ffn_dim: int
    activation_function: str
    vocab_size: int
    max_position_embeddings: int
    scale_embedding: bool
    use_learned_position_embeddings: bool
    layernorm_embedding: bool
    cross_attention_hidden_size: int | None
    tie_word_embeddings: bool
    pad_token_id: int
    eos_token_id: int
    decoder_start_token_id: int


@dataclass(frozen=True)
class VisionConfig:
    encoder: ImageEncoderConfig
    decoder: TextDecoderConfig

    @property
    def source_width(self) -> int:
        """The width of what the decoder's cross-attention reads: the encoder's output, or its
        projection to d_model (``enc_to_dec_proj``) when the widths differ and the decoder
        does not read the encoder's width itself (``cross_attention_hidden_size``)."""
        d = self.decoder
        return d.cross_attention_hidden_size or d.d_model

    @property
    def enc_to_dec_proj(self) -> bool:
        return (self.encoder.hidden_size != self.decoder.d_model
                and self.decoder.cross_attention_hidden_size is None)


def _get(raw: dict, key: str, kind, default=None, *, where: str):
    value = raw.get(key, default)
    ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
    if kind is int:
        ok = ok and value >= 0
    if not ok:
        raise ValueError(f"config.json: {where}.{key} must be "
                         f"{getattr(kind, '__name__', 'a number')}; received {quote(value)}.")
    return value


def _pair(raw: dict, key: str, default: int, where: str) -> tuple[int, int]:
    value = raw.get(key, default)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return (value, value)
    if isinstance(value, list) and len(value) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
        return (value[0], value[1])
    raise ValueError(f"config.json: {where}.{key} must be a size or [height, width]; received "
                     f"{quote(value)}.")


def _encoder(raw: dict) -> ImageEncoderConfig:
    kind = raw.get("model_type")
    if kind not in ENCODERS:
        raise ValueError(f"config.json: the encoder is {quote(kind)}; this NumPy model runs "
                         f"{' and '.join(ENCODERS)} image encoders (TrOCR's).")
    w = "encoder"
    c = ImageEncoderConfig(
        kind, _get(raw, "hidden_size", int, 768, where=w),
        _get(raw, "num_hidden_layers", int, 12, where=w),
        _get(raw, "num_attention_heads", int, 12, where=w),
        _get(raw, "intermediate_size", int, 3072, where=w),
        _get(raw, "hidden_act", str, "gelu", where=w),
        float(_get(raw, "layer_norm_eps", (int, float), 1e-12, where=w)),
        _pair(raw, "image_size", 224, w), _pair(raw, "patch_size", 16, w),
        _get(raw, "num_channels", int, 3, where=w), _get(raw, "qkv_bias", bool, True, where=w))
    if c.hidden_act not in ACTIVATIONS:
        raise ValueError(f"config.json: encoder.hidden_act {quote(c.hidden_act)} is not one of "
                         f"{', '.join(ACTIVATIONS)}.")
    if not c.num_attention_heads or c.hidden_size % c.num_attention_heads:
        raise ValueError(f"config.json: encoder.hidden_size {c.hidden_size} must be divisible "
                         f"by num_attention_heads {c.num_attention_heads}.")
    if min(c.grid) < 1:
        raise ValueError(f"config.json: encoder.image_size {c.image_size} must hold at least "
                         f"one patch of {c.patch_size}.")
    return c


def _decoder(raw: dict) -> TextDecoderConfig:
    if raw.get("model_type") != "trocr":
        raise ValueError(f"config.json: the decoder is {quote(raw.get('model_type'))}; this "
                         f"NumPy model runs TrOCR's text decoder (model_type 'trocr').")
    w = "decoder"
    cross = raw.get("cross_attention_hidden_size")
    c = TextDecoderConfig(
        _get(raw, "d_model", int, 1024, where=w), _get(raw, "decoder_layers", int, 12, where=w),
        _get(raw, "decoder_attention_heads", int, 16, where=w),
        _get(raw, "decoder_ffn_dim", int, 4096, where=w),
        _get(raw, "activation_function", str, "gelu", where=w),
        _get(raw, "vocab_size", int, 50265, where=w),
        _get(raw, "max_position_embeddings", int, 512, where=w),
        _get(raw, "scale_embedding", bool, False, where=w),
        _get(raw, "use_learned_position_embeddings", bool, True, where=w),
        _get(raw, "layernorm_embedding", bool, True, where=w),
        None if cross is None else _get(raw, "cross_attention_hidden_size", int, where=w),
        _get(raw, "tie_word_embeddings", bool, True, where=w),
        _get(raw, "pad_token_id", int, 1, where=w), _get(raw, "eos_token_id", int, 2, where=w),
        _get(raw, "decoder_start_token_id", int, 2, where=w))
    if c.activation_function not in ACTIVATIONS:
        raise ValueError(f"config.json: decoder.activation_function "
                         f"{quote(c.activation_function)} is not one of {', '.join(ACTIVATIONS)}.")
    if not c.decoder_attention_heads or c.d_model % c.decoder_attention_heads:
        raise ValueError(f"config.json: decoder.d_model {c.d_model} must be divisible by "
                         f"decoder_attention_heads {c.decoder_attention_heads}.")
    for name in ("pad_token_id", "eos_token_id", "decoder_start_token_id"):
        if getattr(c, name) >= c.vocab_size:
            raise ValueError(f"config.json: decoder.{name} {getattr(c, name)} is outside the "
                             f"vocabulary of {c.vocab_size}.")
    return c


def read_vision_config(path) -> VisionConfig:
    """A VisionEncoderDecoder's ``config.json`` (bounded JSON), checked.

    Raises
    ------
    ValueError
        Not a vision-encoder-decoder, another encoder or decoder, or a field of the wrong kind.
    """
    raw = read_json(path, CONFIG_BYTES)
    if raw.get("model_type") != "vision-encoder-decoder":
        raise ValueError(f"config.json has model_type {quote(raw.get('model_type'))}; expected "
                         f"'vision-encoder-decoder' (an image-to-text folder such as TrOCR's).")
    parts = [raw.get(side) for side in ("encoder", "decoder")]
    if not all(isinstance(p, dict) for p in parts):
        raise ValueError("config.json must hold an 'encoder' and a 'decoder' object.")
    return VisionConfig(_encoder(parts[0]), _decoder(parts[1]))

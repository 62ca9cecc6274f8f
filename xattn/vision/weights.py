"""A VisionEncoderDecoder's tensors by their transformers names, checked against the config.

The names are those ``save_pretrained`` writes and the Hub's TrOCR folders hold (ViT's
``attention.attention.query``, TrOCR's ``decoder.model.decoder.layers.0.encoder_attn``). Each
part of the model maps to one tensor of one expected shape; a tensor missing, of another shape,
or of another architecture is refused by name before anything is built. The encoder's pooler
(a ViTModel's default head, unused by the decoder) and a mask token are allowed and ignored.
"""

from __future__ import annotations

from xattn._checks import quote
from xattn.vision.config import VisionConfig

__all__ = ["ENC", "DEC", "tensor_shapes", "check_tensors"]

ENC = "encoder."
DEC = "decoder.model.decoder."
_IGNORED = ("encoder.pooler.dense.weight", "encoder.pooler.dense.bias",
            "encoder.embeddings.mask_token")


def _linear(name: str, n_out: int, n_in: int, bias: bool = True) -> dict:
    return {f"{name}.weight": (n_out, n_in), **({f"{name}.bias": (n_out,)} if bias else {})}


def _norm(name: str, d: int) -> dict:
    return {f"{name}.weight": (d,), f"{name}.bias": (d,)}


def _encoder_shapes(config: VisionConfig) -> dict:
    e = config.encoder
    d, (ph, pw) = e.hidden_size, e.patch_size
    out = {f"{ENC}embeddings.cls_token": (1, 1, d),
           f"{ENC}embeddings.position_embeddings": (1, e.n_positions, d),
           **_linear(f"{ENC}embeddings.patch_embeddings.projection", d, 0),
           **_norm(f"{ENC}layernorm", d)}
    out[f"{ENC}embeddings.patch_embeddings.projection.weight"] = (d, e.num_channels, ph, pw)
    if e.n_special == 2:
        out[f"{ENC}embeddings.distillation_token"] = (1, 1, d)
    for i in range(e.num_hidden_layers):
        p = f"{ENC}encoder.layer.{i}."
        for x in ("query", "key", "value"):
            out.update(_linear(f"{p}attention.attention.{x}", d, d, e.qkv_bias))
        out.update(_linear(f"{p}attention.output.dense", d, d))
        out.update(_linear(f"{p}intermediate.dense", e.intermediate_size, d))
        out.update(_linear(f"{p}output.dense", d, e.intermediate_size))
        out.update(_norm(f"{p}layernorm_before", d) | _norm(f"{p}layernorm_after", d))
    return out


def _decoder_shapes(config: VisionConfig, present) -> dict:
    c, d = config.decoder, config.decoder.d_model
    out = {f"{DEC}embed_tokens.weight": (c.vocab_size, d)}
    if c.use_learned_position_embeddings:
        out[f"{DEC}embed_positions.weight"] = (c.max_position_embeddings + 2, d)
    if c.layernorm_embedding:
        out.update(_norm(f"{DEC}layernorm_embedding", d))
    for i in range(c.decoder_layers):
        p = f"{DEC}layers.{i}."
        for block, width in (("self_attn", d), ("encoder_attn", config.source_width)):
            out.update(_linear(f"{p}{block}.q_proj", d, d) | _linear(f"{p}{block}.out_proj", d, d)
                       | _linear(f"{p}{block}.k_proj", d, width)
                       | _linear(f"{p}{block}.v_proj", d, width))
            out.update(_norm(f"{p}{block}_layer_norm", d))
        out.update(_linear(f"{p}fc1", c.decoder_ffn_dim, d) | _linear(f"{p}fc2", d,
                                                                     c.decoder_ffn_dim))
        out.update(_norm(f"{p}final_layer_norm", d))
    if not c.tie_word_embeddings or "decoder.output_projection.weight" in present:
        out["decoder.output_projection.weight"] = (c.vocab_size, d)
    if config.enc_to_dec_proj:
        out.update(_linear("enc_to_dec_proj", d, config.encoder.hidden_size))
    return out


def tensor_shapes(config: VisionConfig, present=()) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape for every tensor this config's model reads."""
    return _encoder_shapes(config) | _decoder_shapes(config, set(present))


def bound_sizes(config: VisionConfig, n_tensors: int, file: str) -> None:
    """Refuse layer counts beyond what the file could hold, before anything is listed."""
    for where, n in (("encoder.num_hidden_layers", config.encoder.num_hidden_layers),
                     ("decoder.decoder_layers", config.decoder.decoder_layers)):
        if n > n_tensors:
            raise ValueError(f"config.json declares {where} = {n}, but {file} holds "
                             f"{n_tensors} tensors in all: the config does not describe these "
                             f"weights.")


def check_tensors(shapes_present: dict, config: VisionConfig, file: str) -> dict:
    """Every tensor the model reads present with its shape, and nothing else but the ignored
    ones; returns ``tensor_shapes``.

    Raises
    ------
    ValueError
        Naming the tensor, the expected shape and the received one.
    """
    bound_sizes(config, len(shapes_present), file)
    shapes = tensor_shapes(config, shapes_present)
    for name, shape in shapes.items():
        if name not in shapes_present:
            raise ValueError(f"{file} has no tensor {name}; expected one of shape {shape} for "
                             f"this config.json ({config.encoder.model_type} + trocr).")
        if tuple(shapes_present[name]) != shape:
            raise ValueError(f"{file}: tensor {name} must have shape {shape} for this "
                             f"config.json; received shape {tuple(shapes_present[name])}.")
    extra = sorted(n for n in shapes_present if n not in shapes and n not in _IGNORED
                   and n != f"{DEC}embed_positions.weight")
    if extra:
        raise ValueError(f"{file} holds tensors this VisionEncoderDecoder does not have, e.g. "
                         f"{quote(extra[0])} ({len(extra)} in all): another architecture, or a "
                         f"config.json that does not match it.")
    return shapes

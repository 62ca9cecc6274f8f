"""Tiny random VisionEncoderDecoder models (ViT or DeiT + TrOCR), made offline in seconds.

For the tests and benchmarks of ``xattn.vision``: no download. ``tiny_vision`` builds the
model from transformers' configs with random weights (optionally redrawn wider, for peaked
attention) and ``save_pretrained`` writes the folder as the Hub has it (safetensors,
``config.json``, ``generation_config.json``), with a ``preprocessor_config.json`` of
ViTImageProcessor's fields. torch and transformers are imported inside the functions.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["ENCODER", "DECODER", "tiny_vision", "save_tiny_vision"]

ENCODER = dict(image_size=32, patch_size=8, hidden_size=24, num_hidden_layers=2,
               num_attention_heads=4, intermediate_size=48)
DECODER = dict(vocab_size=60, d_model=16, decoder_layers=2, decoder_attention_heads=4,
               decoder_ffn_dim=32, max_position_embeddings=40)


def tiny_vision(encoder_type: str = "vit", *, seed: int = 0, spread: float | None = 0.3,
                encoder: dict | None = None, decoder: dict | None = None):
    """A random ``VisionEncoderDecoderModel`` (eval mode, eager attention).

    ``encoder_type``: "vit" or "deit"; ``encoder``, ``decoder``: ViTConfig / TrOCRConfig
    fields over the tiny sizes; ``spread``: every weight redrawn as normal(0, spread) (norm
    scales around 1), or None for transformers' initial weights.
    """
    import torch
    import transformers as tf

    kind = {"vit": tf.ViTConfig, "deit": tf.DeiTConfig}[encoder_type]
    cfg = tf.VisionEncoderDecoderConfig.from_encoder_decoder_configs(
        kind(**{**ENCODER, **(encoder or {})}), tf.TrOCRConfig(**{**DECODER, **(decoder or {})}))
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = tf.VisionEncoderDecoderModel(cfg)
        if spread is not None:
            with torch.no_grad():
                for name, param in model.named_parameters():
                    norm = "norm" in name and name.endswith("weight")
                    param.normal_(1.0 if norm else 0.0, spread)
    model.set_attn_implementation("eager")
    return model.eval()


def save_tiny_vision(model, folder, *, size: tuple[int, int] | None = None) -> Path:
    """``model.save_pretrained(folder)`` and a ``preprocessor_config.json`` (ViTImageProcessor,
    mean and std 0.5 as TrOCR's) resizing to the encoder's image size."""
    folder = Path(folder)
    model.save_pretrained(folder)
    image = model.config.encoder.image_size
    height, width = size or ((image, image) if isinstance(image, int) else tuple(image))
    (folder / "preprocessor_config.json").write_text(json.dumps({
        "image_processor_type": "ViTImageProcessor", "do_resize": True, "resample": 2,
        "size": {"height": height, "width": width}, "do_rescale": True,
        "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5]}))
    return folder

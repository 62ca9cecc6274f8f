"""Random Whisper models of any size, built by transformers from a config and saved with
``save_pretrained`` (safetensors): for the tests and benchmarks of ``xattn.speech``, no
download. torch and transformers are imported inside the functions."""

from __future__ import annotations

from pathlib import Path

__all__ = ["TINY", "WHISPER_TINY", "whisper_model", "save_whisper"]

# A test's model: small, with every id inside its vocabulary of 120.
TINY = dict(vocab_size=120, d_model=64, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
            decoder_ffn_dim=128, num_mel_bins=80, max_source_positions=100,
            max_target_positions=40, decoder_start_token_id=100, pad_token_id=101,
            bos_token_id=101, eos_token_id=102, begin_suppress_tokens=[5, 102],
            suppress_tokens=[7, 9])
# openai/whisper-tiny's shapes (transformers' WhisperConfig defaults, written out).
WHISPER_TINY = dict(vocab_size=51865, d_model=384, encoder_layers=4, decoder_layers=4,
                    encoder_attention_heads=6, decoder_attention_heads=6,
                    encoder_ffn_dim=1536, decoder_ffn_dim=1536, num_mel_bins=80,
                    max_source_positions=1500, max_target_positions=448,
                    begin_suppress_tokens=None, suppress_tokens=None)


def whisper_model(*, seed: int = 0, spread: float | None = None, **config):
    """A random ``WhisperForConditionalGeneration`` (eval mode, eager attention).

    ``spread``: redraw every weight but the encoder's sinusoidal positions as normal(0,
    spread) (norm scales around 1), for peaked attention and varied tokens instead of the
    near-uniform attention of transformers' small initial weights.
    """
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    cfg = WhisperConfig(**config)
    with torch.random.fork_rng():     # seeded without touching the caller's global RNG
        torch.manual_seed(seed)
        model = WhisperForConditionalGeneration(cfg)
        if spread is not None:
            with torch.no_grad():
                for name, param in model.named_parameters():
                    if name == "model.encoder.embed_positions.weight":
                        continue
                    norm = "layer_norm" in name and name.endswith("weight")
                    param.normal_(1.0 if norm else 0.0, spread)
    model.set_attn_implementation("eager")
    return model.eval()


def save_whisper(folder, **kwargs) -> Path:
    """``whisper_model(**kwargs)`` saved to ``folder`` (config.json, generation_config.json,
    model.safetensors); returns the folder."""
    folder = Path(folder)
    whisper_model(**kwargs).save_pretrained(folder)
    return folder

"""A model folder's declared sizes, checked before transformers builds anything.

transformers builds a model from its ``config.json`` first and fills in the weights after:
a config that declares 100,000 layers makes it build 100,000 layers (seen: no answer in 60 s
and 2 GB of memory in 90 s) whatever the weight files hold, and layers the weights lack are
made up at random. So a local folder's config is read as untrusted input (bounded in bytes
and depth, ``xattn.encdec.files``) and refused in one line when a size is beyond any
translation model's, or when the parameters it declares could not be in its weight files.
"""

from __future__ import annotations

import os
from pathlib import Path

from xattn.encdec.config import CONFIG_BYTES
from xattn.encdec.files import read_json

__all__ = ["check_declared_sizes", "BOUNDS"]

# The largest size of each kind any translation model here needs (NLLB-3.3B: 24 + 24 layers,
# d_model 2048, d_ff 8192, 256k vocabulary), with room to spare.
BOUNDS = {
    "layers": (128, ("num_layers", "num_hidden_layers", "encoder_layers", "decoder_layers",
                     "num_decoder_layers", "n_layer", "n_layers")),
    "width": (16_384, ("d_model", "hidden_size", "n_embd", "d_kv")),
    "ffn": (131_072, ("encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "intermediate_size",
                      "ffn_dim")),
    "heads": (256, ("encoder_attention_heads", "decoder_attention_heads", "num_heads",
                    "num_attention_heads", "n_head")),
    "vocab": (2_097_152, ("vocab_size", "decoder_vocab_size")),
    "positions": (1_048_576, ("max_position_embeddings", "n_positions")),
}
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack")
_SLACK = 1.25            # weight files hold this much more than the declared parameters' half


def _ints(raw, found: dict[str, int], depth: int = 0) -> None:
    """Every size field anywhere in ``raw`` (a sub-config: ``encoder``, ``text_config``)."""
    if depth > 8:
        return
    for key, value in raw.items():
        if isinstance(value, dict):
            _ints(value, found, depth + 1)
        elif type(value) is int:
            for kind, (_, keys) in BOUNDS.items():
                if key in keys:
                    found[f"{kind}:{key}"] = max(value, found.get(f"{kind}:{key}", 0))


def _declared(found: dict[str, int], kind: str) -> int:
    return max((v for k, v in found.items() if k.startswith(kind + ":")), default=0)


def check_declared_sizes(folder) -> None:
    """Refuse ``folder`` (a local model folder) when its ``config.json`` declares a size
    beyond `BOUNDS` or more parameters than its weight files can hold (at 2 bytes each).

    Raises
    ------
    ValueError
        One line: the field, its value and the bound (or the weights' bytes).
    """
    path = Path(folder) / "config.json"
    if not path.is_file():
        return                       # transformers says what is missing
    raw = read_json(path, CONFIG_BYTES)
    found: dict[str, int] = {}
    _ints(raw, found)
    for name, value in sorted(found.items()):
        kind, key = name.split(":")
        bound = BOUNDS[kind][0]
        if value > bound:
            raise ValueError(f"config.json declares {key} = {value}, more than any translation "
                             f"model here has ({bound} at most): the folder is refused before "
                             "anything is built.")
    def most(*keys):
        return max((found.get(f"layers:{k}", 0) for k in keys), default=0)
    encoder = most("encoder_layers", "num_layers", "num_hidden_layers", "n_layer", "n_layers")
    layers = encoder + (most("decoder_layers", "num_decoder_layers") or encoder)
    width, ffn = _declared(found, "width"), _declared(found, "ffn") or 4 * _declared(found,
                                                                                      "width")
    # each layer: attention (4 d^2, 8 d^2 with cross-attention) and a feed-forward (2 d ffn)
    params = _declared(found, "vocab") * width + layers * (6 * width * width + 2 * width * ffn)
    held = sum(f.stat().st_size for f in Path(folder).iterdir()
               if f.is_file() and f.name.endswith(_WEIGHTS) and not os.path.islink(f))
    if held and 2 * params > _SLACK * held + (64 << 20):
        raise ValueError(f"config.json declares about {params / 1e6:,.0f} million parameters "
                         f"({layers} layers of width {width}), but the folder's weight files "
                         f"hold {held / 1e6:,.1f} MB: transformers would make up the rest at "
                         "random. The folder is refused before anything is built.")

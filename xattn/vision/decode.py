"""Greedy decoding of an image, one step at a time with a key/value cache, as
``xattn.encdec.decode`` does for a sentence: each step's token, its options and every
layer's cross-attention row over the encoder positions (CLS, distillation, the patches).

The decoder starts from ``decoder_start_token_id`` and stops at ``eos_token_id``, as
transformers' ``generate`` (one beam, no sampling) does for TrOCR. A token may be forced at
any step (``forced={step: token_id}``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_bool, check_int
from xattn.encdec.decode import DecodeStep, check_forced, decode_step

__all__ = ["ImageDecoding", "decode"]


@dataclass(frozen=True, eq=False)
class ImageDecoding:
    """A greedy decoding of one image.

    Attributes
    ----------
    tgt_ids : tuple of int
        The tokens produced, up to and including ``</s>`` when it was reached.
    steps : tuple of xattn.encdec.decode.DecodeStep
        One per token; ``cross_attention`` (n_layers, n_heads, n_src).
    finished : bool
    """

    tgt_ids: tuple[int, ...]
    steps: tuple[DecodeStep, ...]
    finished: bool

    @property
    def cross_attention(self) -> np.ndarray:
        """(n_layers, n_heads, n_tgt, n_src), as a teacher-forced pass on ``tgt_ids``."""
        return np.stack([s.cross_attention for s in self.steps], axis=2)

    def __repr__(self) -> str:
        return f"ImageDecoding(n_tgt={len(self.tgt_ids)}, finished={self.finished})"


def decode(model, pixel_values, *, max_new_tokens: int = 32, forced=None, top_k: int = 5,
           head_mask=None, use_cache: bool = True) -> ImageDecoding:
    """Greedy decoding (one beam) of ``pixel_values`` (3, height, width).

    Parameters
    ----------
    model : xattn.vision.VisionEncoderDecoder
    pixel_values : ndarray of shape (3, height, width)
        ``model.pixel_values(image)``.
    max_new_tokens : int, default 32
    forced : dict of int to int, optional
        ``{step: token_id}`` taken instead of the most probable token.
    top_k : int, default 5
    head_mask : array_like of shape (n_layers, n_heads), optional
    use_cache : bool, default True
        False recomputes every earlier position at each step (the same numbers, slower).

    Returns
    -------
    ImageDecoding
    """
    c = model.config.decoder
    max_new = check_int(max_new_tokens, "max_new_tokens", minimum=1,
                        maximum=c.max_position_embeddings)
    forced = check_forced(forced, max_new, c.vocab_size)
    top_k = check_int(top_k, "top_k", minimum=1, maximum=c.vocab_size - 1)
    gates = model.check_head_mask(head_mask)
    cached = check_bool(use_cache, "use_cache")
    sources = model.sources(model.encode(pixel_values))
    caches = [None] * model.n_layers
    produced, steps = [], []
    for t in range(max_new):
        if cached:
            y = model.embed([produced[-1] if produced else c.decoder_start_token_id], past=t)
            y, _, w, caches = model.decoder(y, sources, caches, t, gates)  # w: (L, h, 1, S)
        else:
            y = model.embed([c.decoder_start_token_id, *produced])
            y, _, w, _ = model.decoder(y, sources, [None] * model.n_layers, 0, gates)
        steps.append(decode_step(t, model.logits(y[-1:])[0], w[:, :, -1], forced.get(t),
                                 top_k, None))
        produced.append(steps[-1].token_id)
        if produced[-1] == c.eos_token_id:
            break
    return ImageDecoding(tuple(produced), tuple(steps), produced[-1] == c.eos_token_id)

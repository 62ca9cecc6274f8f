"""One sentence pair through a transformers model: greedy translation and the teacher-forced
pass with ``output_attentions=True``. torch is imported inside the functions only.
"""

from __future__ import annotations

import numpy as np

from xattn.translator import ModelUnavailable

__all__ = ["teacher_forced", "translate_ids", "cross_attentions"]


def _check_length(loaded, ids, side: str) -> None:
    limit = getattr(loaded.model.config, "max_position_embeddings", None)
    if isinstance(limit, int) and len(ids) > limit:
        raise ValueError(f"The {side} has {len(ids)} pieces; {loaded.name} reads at most "
                         f"{limit}. Give a shorter sentence.")


def translate_ids(loaded, src_ids, max_new_tokens: int) -> list[int]:
    """Greedy translation, without the decoder's start token, up to and including ``</s>``."""
    import torch

    src_ids = list(src_ids)
    _check_length(loaded, src_ids, "source")
    limit = getattr(loaded.model.config, "max_position_embeddings", None)
    if isinstance(limit, int):      # the teacher-forced pass must fit the positions, too
        max_new_tokens = min(max_new_tokens, limit - 1)
    with loaded.lock, torch.no_grad():
        out = loaded.model.generate(input_ids=torch.tensor([src_ids]), num_beams=1,
                                    do_sample=False, max_new_tokens=max_new_tokens)
    ids = out[0].tolist()
    if ids and ids[0] == loaded.model.config.decoder_start_token_id:
        ids = ids[1:]
    eos = loaded.tokenizer.eos_token_id
    return ids[:ids.index(eos) + 1] if eos in ids else ids


def teacher_forced(loaded, src_ids, tgt_ids):
    """One teacher-forced pass: the decoder reads ``tgt_ids`` shifted right by one."""
    import torch

    _check_length(loaded, src_ids, "source")
    _check_length(loaded, tgt_ids, "target")
    with loaded.lock, torch.no_grad():
        return loaded.model(input_ids=torch.tensor([list(src_ids)]),
                            labels=torch.tensor([list(tgt_ids)]), output_attentions=True,
                            use_cache=False, return_dict=True)


def cross_attentions(loaded, src_ids, tgt_ids) -> np.ndarray:
    """Every decoder layer's cross-attention, (n_layers, n_heads, n_tgt, n_src) float32."""
    import torch

    layers = teacher_forced(loaded, src_ids, tgt_ids).cross_attentions
    if not layers or any(a is None for a in layers):
        impl = getattr(loaded.model.config, "_attn_implementation", "?")
        raise ModelUnavailable(
            f"The model returned no cross-attention weights: its attention runs as {impl!r}, "
            f"which does not report them. Load it with attn_implementation=\"eager\" (load_model "
            f"does) or call model.set_attn_implementation(\"eager\").")
    return torch.stack([a[0] for a in layers]).float().numpy()       # (L, H, T, S)

"""Where one attention weight comes from: the stages of one head for one target token.

``stages(trace, head, i)`` cuts the numbers of a real run (``MultiHeadCrossAttention.trace``)
into the steps a lecturer walks through, each with its formula and shape. ``saturation`` shows
why the scores are divided by sqrt(d_head): without it, the softmax saturates as d_head grows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn.attention import AttentionTrace, MultiHeadCrossAttention
from xattn.metrics import entropy, normalised_entropy

__all__ = ["Stage", "stages", "saturation", "row_entropy"]


@dataclass(frozen=True)
class Stage:
    """One step: a title, its formula (LaTeX), the shape as a reader writes it ("8", "7 × 8"),
    and the numbers."""

    title: str
    formula: str
    shape: str
    values: np.ndarray


def row_entropy(weights_row: np.ndarray, allowed: np.ndarray) -> float:
    """Entropy (nats) of one row of weights over its allowed keys; 0 for a single key, NaN for
    a row with no key (`xattn.metrics.entropy` of that row)."""
    return float(entropy(weights_row[None], allowed)[0])


def stages(trace: AttentionTrace, head: int, i: int) -> list[Stage]:
    """The computation of head ``head`` for target token ``i``, stage by stage.

    Parameters
    ----------
    trace : AttentionTrace
        An unbatched trace.
    head : int
        Head index, 0-based.
    i : int
        Target position, 0-based.

    Returns
    -------
    list of Stage
        Query, keys, dot products, scaled scores, mask, weights, weighted values, head output,
        concatenation, output row.
    """
    n_heads, n_tgt, n_src = trace.weights.shape
    if trace.weights.ndim != 3:
        raise ValueError(f"stages needs an unbatched trace; received weights of shape "
                         f"{trace.weights.shape}.")
    if not (0 <= head < n_heads and 0 <= i < n_tgt):
        raise ValueError(f"head must be in 0..{n_heads - 1} and i in 0..{n_tgt - 1}; received "
                         f"head={head}, i={i}.")
    d_head = trace.q.shape[-1]
    d_model = trace.output.shape[-1]
    w = trace.weights[head, i]                                         # (n_src,)
    scale = "1/\\sqrt{d_{head}}" if trace.scale != 1.0 else "1 \\;(\\text{scaling off})"
    return [
        Stage("Query of this target token", r"q_i = x_i W^Q_h", f"{d_head}",
              trace.q[head, i]),
        Stage("Keys of the source tokens", r"k_j = s_j W^K_h", f"{n_src} × {d_head}",
              trace.k[head]),
        Stage("Dot products", r"q_i \cdot k_j", f"{n_src}", trace.scores[head, i]),
        Stage("Scaled scores", rf"q_i \cdot k_j \times {scale}", f"{n_src}",
              trace.scaled_scores[head, i]),
        Stage("Mask", r"M_{ij} = 0 \text{ (may attend) or } -\infty", f"{n_src}",
              trace.mask[i]),
        Stage("Softmax weights", r"a_{ij} = \frac{e^{z_{ij}}}{\sum_{j'} e^{z_{ij'}}}",
              f"{n_src}", w),
        Stage("Weighted values", r"a_{ij}\, v_j \quad (v_j = s_j W^V_h)",
              f"{n_src} × {d_head}", w[:, None] * trace.v[head]),
        Stage("Head output", r"o_i^h = \sum_j a_{ij} v_j", f"{d_head}",
              trace.head_outputs[head, i]),
        Stage("All heads side by side", r"[o_i^1, \dots, o_i^{h}]", f"{d_model}",
              trace.concat[i]),
        Stage("Output row", r"y_i = [o_i^1, \dots, o_i^{h}]\, W^O", f"{d_model}",
              trace.output[i]),
    ]


def saturation(decoder_state_fn, encoder_output_fn, mask, n_heads: int, seed: int,
               d_heads=(1, 2, 4, 8, 16, 32, 64)) -> dict[str, np.ndarray]:
    """Mean normalised entropy of the weights, with and without 1/sqrt(d_head), per d_head.

    Parameters
    ----------
    decoder_state_fn, encoder_output_fn : callable(d_model) -> ndarray
        Build the inputs at a given width (e.g. the toy embedder of that width).
    mask : ndarray of bool, shape (n_tgt, n_src)
    n_heads : int
    seed : int
    d_heads : sequence of int

    Returns
    -------
    dict with ``"d_head"``, ``"scaled"`` and ``"unscaled"``, each of shape (len(d_heads),)
        Entropy 1 = spread evenly, 0 = all on one key (saturated).
    """
    scaled, unscaled = [], []
    for d_head in d_heads:
        d_model = d_head * n_heads
        mha = MultiHeadCrossAttention(d_model, n_heads, seed=seed)
        x_t, x_s = decoder_state_fn(d_model), encoder_output_fn(d_model)
        for flag, out in ((True, scaled), (False, unscaled)):
            w = mha.trace(x_t, x_s, mask, scale=flag).weights
            out.append(float(np.nanmean(normalised_entropy(w, mask))))
    return {"d_head": np.array(d_heads), "scaled": np.array(scaled),
            "unscaled": np.array(unscaled)}

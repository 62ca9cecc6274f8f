"""What one attention call computed, step by step: `AttentionTrace`, and the masked softmax.

The teaching path of ``xattn.attention.MultiHeadCrossAttention`` (``trace``) keeps every
intermediate in an `AttentionTrace`; a real model's layer opened through hooks
(``xattn.torch_models.layer_trace``) fills the same record, so one view shows both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["AttentionTrace", "masked_softmax"]


def masked_softmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the last axis (the source keys) where ``mask`` allows; 0 elsewhere.

    Parameters
    ----------
    scores : ndarray of shape (..., n_src)
        May hold ``-inf`` at keys that are not to be attended.
    mask : ndarray of bool, broadcastable to ``scores``, optional
        True where a key may be attended.

    Returns
    -------
    ndarray of the shape of ``scores``
        Rows sum to 1; a row with no key to attend (every key masked) is all zero, never NaN.

    Examples
    --------
    >>> masked_softmax(np.array([[0.0, 0.0, 5.0]]), np.array([True, True, False])).tolist()
    [[0.5, 0.5, 0.0]]
    """
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    has_key = np.isfinite(row_max)
    e = np.exp(scores - np.where(has_key, row_max, 0))
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=has_key)


@dataclass(frozen=True)
class AttentionTrace:
    """Every intermediate of one cross-attention call, for teaching views.

    Shapes are given unbatched; batched calls add a leading ``B`` axis to every field.

    Attributes
    ----------
    q : ndarray of shape (n_heads, n_tgt, d_head)
        Queries per head, ``decoder_state @ W_Q (+ b_Q)`` split by heads (not yet scaled).
    k : ndarray of shape (n_heads, n_src, d_head)
        Keys per head, ``encoder_output @ W_K (+ b_K)`` split by heads.
    v : ndarray of shape (n_heads, n_src, d_head)
        Values per head, ``encoder_output @ W_V (+ b_V)`` split by heads.
    scores : ndarray of shape (n_heads, n_tgt, n_src)
        Raw dot products ``q @ k^T``.
    scaled_scores : ndarray of shape (n_heads, n_tgt, n_src)
        ``scores * scale`` (``scale`` is the module's ``scaling``, ``1/sqrt(d_head)`` unless
        given, or 1 when scaling is switched off), plus the position bias where there is one.
    masked_scores : ndarray of shape (n_heads, n_tgt, n_src)
        ``scaled_scores`` with ``-inf`` where a key may not be attended.
    mask : ndarray of shape (n_tgt, n_src), bool
        The encoder mask broadcast to every target row (True = may attend).
    weights : ndarray of shape (n_heads, n_tgt, n_src)
        Softmax over source keys of ``masked_scores``; rows with no key are all zero.
    head_outputs : ndarray of shape (n_heads, n_tgt, d_head)
        ``weights @ v`` per head, times ``head_mask``.
    concat : ndarray of shape (n_tgt, n_heads * d_head)
        The head outputs side by side (head 0 first).
    output : ndarray of shape (n_tgt, d_model)
        ``concat @ W_O (+ b_O)``.
    scale : float
        The factor applied to the scores.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    scaled_scores: np.ndarray
    masked_scores: np.ndarray
    mask: np.ndarray
    weights: np.ndarray
    head_outputs: np.ndarray
    concat: np.ndarray
    output: np.ndarray
    scale: float

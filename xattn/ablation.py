"""Head importance by ablation (Michel, Levy and Neubig 2019): switch heads off, measure.

A head is switched off through the module's ``head_mask`` gate, which multiplies its output
before ``W_O``; the change of the output, ``||Y - Y_off|| / ||Y||``, says how much the output
depends on it. The weights of the other heads do not change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_heads, check_int

__all__ = ["AblationResult", "ablation", "relative_change"]


@dataclass(frozen=True)
class AblationResult:
    """How much the output changes when heads are switched off, ``||Y - Y_off|| / ||Y||``.

    Norms are Frobenius norms over every output number (per target token: over ``d_model``).
    When ``||Y|| = 0`` the change is 0 if nothing changed (e.g. a fully masked target row) and
    NaN otherwise (a relative change of zero is undefined).

    Attributes
    ----------
    per_head : ndarray of shape (n_heads,)
        Change when head ``h`` alone is switched off.
    chosen : float
        Change when every head in ``heads_off`` is switched off (0 for none).
    per_token : ndarray of shape (n_tgt,), or (B, n_tgt) for batched inputs
        The change for ``heads_off``, per target token.
    heads_off : tuple of int
        The chosen heads, sorted.
    """

    per_head: np.ndarray
    chosen: float
    per_token: np.ndarray
    heads_off: tuple[int, ...]

    def __repr__(self) -> str:
        heads = np.array2string(self.per_head, precision=3)
        return (f"AblationResult(heads_off={self.heads_off}, chosen={self.chosen:.3g}, "
                f"per_head={heads})")


def relative_change(y: np.ndarray, y_off: np.ndarray, axis=None) -> np.ndarray:
    """``||y - y_off|| / ||y||`` over everything (``axis=None``) or along ``axis``.

    0 where nothing changed, NaN where ``||y|| = 0`` but something changed.
    """
    diff = np.linalg.norm((y - y_off).reshape(-1) if axis is None else y - y_off, axis=axis)
    ref = np.linalg.norm(y.reshape(-1) if axis is None else y, axis=axis)
    undefined = np.where(diff > 0, np.nan, 0.0)
    return np.divide(diff, ref, out=np.asarray(undefined, dtype=np.float64), where=ref > 0)


def ablation(module, decoder_state, encoder_output, encoder_mask=None,
             heads_off=()) -> AblationResult:
    """Head importance by ablation (Michel, Levy and Neubig 2019).

    Runs ``module`` once with every gate at 1, once per head with that head's ``head_mask``
    gate at 0, and once with the gates of ``heads_off`` at 0. Because the output is linear in
    the gates, ``Y - Y_off`` is exactly the contribution of the switched-off heads.

    Parameters
    ----------
    module : MultiHeadCrossAttention
        Anything with an ``n_heads`` attribute, called as
        ``module(decoder_state, encoder_output, encoder_mask, head_mask=gates)`` and returning
        ``(output, weights)``.
    decoder_state, encoder_output, encoder_mask
        As for the module's ``__call__`` (batched or not).
    heads_off : iterable of int, default ()
        Heads to switch off together, each in ``0..n_heads-1``.

    Returns
    -------
    AblationResult

    Examples
    --------
    >>> import numpy as np
    >>> from xattn.attention import MultiHeadCrossAttention
    >>> mha = MultiHeadCrossAttention(d_model=8, n_heads=2, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> x_t, x_s = rng.standard_normal((3, 8)), rng.standard_normal((4, 8))
    >>> res = ablation(mha, x_t, x_s, heads_off=[0, 1])
    >>> res.chosen, res.per_token.tolist()
    (1.0, [1.0, 1.0, 1.0])
    """
    n_heads = check_int(getattr(module, "n_heads", None), "module.n_heads (e.g. of a "
                        "MultiHeadCrossAttention)", minimum=1)
    off = check_heads(heads_off, n_heads, "heads_off")

    def run(gates_off) -> np.ndarray:
        gates = np.ones(n_heads)
        gates[list(gates_off)] = 0.0
        return np.asarray(module(decoder_state, encoder_output, encoder_mask,
                                 head_mask=gates)[0])

    y = run(())                                                      # (n_tgt, d_model) or batched
    y_off = run(off)
    per_head = np.array([relative_change(y, run((h,))) for h in range(n_heads)])
    return AblationResult(per_head=per_head, chosen=float(relative_change(y, y_off)),
                          per_token=relative_change(y, y_off, axis=-1), heads_off=off)


"""Every layer and head of a model scored against gold alignments over many sentence pairs.

``score_heads`` takes one ``(weights, gold)`` per sentence pair, weights of shape
``(n_layers, n_heads, n_tgt, n_src)``, and returns a ``LabScores``: AER, precision and recall
for every head, for every layer's average over its heads (the weights averaged, then turned
into links, as Garg et al. 2019 read a layer), and the best layer and head. Counts are summed
over the pairs before dividing (micro-average). Pairs of equal shape are scored together, so
256 toy sentences (about 20 shapes) cost about 20 vectorised passes.

``toy_examples`` gives the examples for a ``MultiHeadCrossAttention`` on toy corpus pairs,
with the corpus's gold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from xattn._checks import quote, shape_text
from xattn.alignlab.gold import GoldLinks, gold_from_pair
from xattn.alignlab.links import check_method, links, rates
from xattn.attention import MultiHeadCrossAttention
from xattn.corpus import SentencePair
from xattn.train import make_batch

__all__ = ["LabScores", "score_heads", "toy_examples"]


@dataclass(frozen=True, eq=False)
class LabScores:
    """How every head and layer aligns, over ``n_pairs`` sentence pairs.

    Attributes
    ----------
    method : str
        How weights became links (``xattn.alignlab.links.METHODS``).
    threshold : float or None
    n_pairs : int
    counts : ndarray of int64, shape (n_layers, n_heads, 4)
        Summed ``|A|, |S|, |A∩S|, |A∩P|`` per head (``links.COUNTS``).
    layer_counts : ndarray of int64, shape (n_layers, 4)
        The same for each layer's head-averaged weights.
    aer, precision, recall : ndarray of shape (n_layers, n_heads)
    layer_aer, layer_precision, layer_recall : ndarray of shape (n_layers,)
        NaN where undefined (no links, or no sure links).
    best_layer : int
        The layer whose average has the lowest AER (the lower layer on a tie); -1 if no AER
        is defined.
    best_head : tuple of (int, int)
        ``(layer, head)`` with the lowest AER (the first on a tie); ``(-1, -1)`` if none is
        defined.
    best_layers : tuple of int
        Every layer whose average ties for the lowest AER (one on no tie; empty if none).
    best_heads : tuple of (int, int)
        Every head that ties for the lowest AER.
    """

    method: str
    threshold: float | None
    n_pairs: int
    counts: np.ndarray
    layer_counts: np.ndarray
    aer: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    layer_aer: np.ndarray
    layer_precision: np.ndarray
    layer_recall: np.ndarray
    best_layer: int
    best_head: tuple[int, int]
    best_layers: tuple[int, ...] = ()
    best_heads: tuple[tuple[int, int], ...] = ()

    def __repr__(self) -> str:
        n_l, n_h = self.aer.shape
        return (f"LabScores(method={self.method!r}, n_pairs={self.n_pairs}, n_layers={n_l}, "
                f"n_heads={n_h}, best_layer={self.best_layer}, best_head={self.best_head})")


def _example(k: int, example, layout: tuple | None) -> tuple[np.ndarray, GoldLinks]:
    try:
        weights, gold = example
    except (TypeError, ValueError):
        raise TypeError(f"examples[{k}] must be a pair (weights, gold); received "
                        f"{type(example).__name__} {quote(example)}.") from None
    if isinstance(gold, SentencePair):
        gold = gold_from_pair(gold)
    if not isinstance(gold, GoldLinks):
        raise TypeError(f"examples[{k}]: gold must be a GoldLinks or a SentencePair; received "
                        f"{type(gold).__name__}.")
    w = np.asarray(weights, dtype=np.float64)
    w = w[None] if w.ndim == 3 else w                                       # (L, H, T, S)
    if w.ndim != 4 or (layout is not None and w.shape[:2] != layout):
        expected = "(n_layers, n_heads, n_tgt, n_src)" if layout is None else \
            f"({layout[0]}, {layout[1]}, n_tgt, n_src) like examples[0]"
        raise ValueError(f"examples[{k}]: weights must have shape {expected}; received shape "
                         f"{shape_text(np.asarray(weights))}.")
    return w, gold


def _best(values: np.ndarray) -> tuple[int, ...]:
    """Index of the smallest non-NaN value (the first on a tie), -1s if all are NaN."""
    if np.isnan(values).all():
        return (-1,) * values.ndim
    return tuple(int(i) for i in np.unravel_index(np.nanargmin(values), values.shape))


def _ties(values: np.ndarray) -> tuple:
    """Every index whose value equals the smallest (AERs are ratios of counts: a tie is equal
    to rounding), in order; empty if all are NaN."""
    if np.isnan(values).all():
        return ()
    low = np.nanmin(values)
    found = np.argwhere(np.isclose(values, low, rtol=0, atol=1e-12))
    return tuple(int(i[0]) if values.ndim == 1 else tuple(int(k) for k in i) for i in found)


def score_heads(examples: Sequence, *, method: str = "target_argmax",
                threshold: float | None = None) -> LabScores:
    """Score every head and every layer's head average against gold, over sentence pairs.

    Parameters
    ----------
    examples : sequence of (weights, gold)
        ``weights``: array_like of shape (n_layers, n_heads, n_tgt, n_src), or (n_heads,
        n_tgt, n_src) for one layer; n_layers and n_heads equal in every example, n_tgt and
        n_src free. Extra rows or columns (``</s>``) are allowed: no gold link lies there,
        so a link to them counts against precision; slice them off to leave them out.
        ``gold``: a ``GoldLinks`` (zero-based, inside the weights' n_src x n_tgt), or a toy
        ``SentencePair`` (its alignment: sure links).
    method : {"target_argmax", "source_argmax", "intersection", "threshold"}
    threshold : float, only for ``method="threshold"``

    Returns
    -------
    LabScores

    Examples
    --------
    >>> from xattn.corpus import translate
    >>> pair = translate("the red cat sleeps")      # gold: le-the, chat-cat, rouge-red, dort
    >>> w = np.tile(pair.alignment_matrix() * 1.0, (2, 3, 1, 1))  # (2 layers, 3 heads, T, S)
    >>> w[1, 0] = np.eye(4)                           # layer 1, head 0: the diagonal
    >>> s = score_heads([(w, pair)])
    >>> s.aer.round(2).tolist(), s.best_layer
    ([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]], 0)
    >>> s.best_layers, s.best_heads                  # ties are reported as ties
    ((0, 1), ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2)))
    """
    threshold = check_method(method, threshold)
    if isinstance(examples, (str, bytes)) or not isinstance(examples, Sequence):
        raise TypeError(f"examples must be a sequence of (weights, gold) pairs; received "
                        f"{type(examples).__name__}.")
    if not examples:
        raise ValueError("examples must hold at least one (weights, gold) pair; received none.")
    groups: dict[tuple[int, int], list] = {}
    layout = None
    for k, example in enumerate(examples):
        w, gold = _example(k, example, layout)
        layout = w.shape[:2]
        n_tgt, n_src = w.shape[2:]
        try:
            sure, possible = gold.matrices(n_tgt, n_src)
        except ValueError as err:
            raise ValueError(f"examples[{k}]: {err}") from None
        groups.setdefault((n_tgt, n_src), []).append((w, sure, possible))
    n_layers, n_heads = layout
    counts = np.zeros((n_layers, n_heads + 1, 4), dtype=np.int64)
    for members in groups.values():
        w = np.stack([m[0] for m in members])                               # (B, L, H, T, S)
        w = np.concatenate([w, w.mean(axis=2, keepdims=True)], axis=2)      # (B, L, H+1, T, S)
        a = links(w, method, threshold=threshold)                            # (B, L, H+1, T, S)
        sure = np.stack([m[1] for m in members])[:, None, None]              # (B, 1, 1, T, S)
        possible = np.stack([m[2] for m in members])[:, None, None]
        counts += np.stack([a.sum(axis=(0, 3, 4)),
                            np.broadcast_to(sure.sum(), (n_layers, n_heads + 1)),
                            (a & sure).sum(axis=(0, 3, 4)),
                            (a & possible).sum(axis=(0, 3, 4))], axis=-1)    # (L, H+1, 4)
    head, layer = rates(counts[:, :n_heads]), rates(counts[:, n_heads])
    return LabScores(method, threshold, len(examples), counts[:, :n_heads], counts[:, n_heads],
                     head["aer"], head["precision"], head["recall"], layer["aer"],
                     layer["precision"], layer["recall"], _best(layer["aer"])[0],
                     _best(head["aer"]), _ties(layer["aer"]), _ties(head["aer"]))


def toy_examples(model, embedder, pairs: Sequence[SentencePair]) -> list[tuple]:
    """``(weights (1, n_heads, n_tgt, n_src), pair)`` for each toy pair, as ``score_heads``
    takes them: a ``MultiHeadCrossAttention`` on the inputs ``xattn.train`` trains with.

    Examples
    --------
    >>> from xattn import MultiHeadCrossAttention, ToyEmbedder, generate_pairs
    >>> ex = toy_examples(MultiHeadCrossAttention(8, 2), ToyEmbedder(8), generate_pairs(3))
    >>> [w.shape for w, _ in ex]
    [(1, 2, 6, 6), (1, 2, 3, 3), (1, 2, 5, 5)]
    """
    if not isinstance(model, MultiHeadCrossAttention):
        raise TypeError(f"model must be a MultiHeadCrossAttention; received "
                        f"{type(model).__name__}.")
    batch = make_batch(pairs, embedder)
    _, weights = model(batch.decoder_state, batch.encoder_output, batch.encoder_mask)  # (B,H,T,S)
    return [(weights[b, :, :len(p.target), :len(p.source)][None], p)         # (1, H, T, S)
            for b, p in enumerate(pairs)]

"""How well a Marian model translates the toy corpus, and how its cross-attention aligns.

For the shipped model's card (``metrics.json``, recomputed by the tests): held-out sentence
pairs of ``xattn.corpus`` (drawn by seed, never trained on), greedy translations compared
exactly with the references, and every layer's and head's cross-attention on the reference
(teacher forcing) compared with the corpus's gold word alignment. Pieces are merged into words
as ``xattn.subwords`` does (attention TO a word: sum over its pieces; FROM a word: mean).

Per head, and per layer for the average over its heads, with ``W`` the word-level weights
(target words x source words, ``</s>`` included as a column):

- ``accuracy``: share of target words whose most-attended column is the gold word, ``</s>``
  counted as a column (as the heatmaps draw it: a word that looks most at ``</s>`` is wrong);
- ``accuracy_words``: the same with ``</s>`` left out (the most-attended source *word*);
  ``1 - accuracy`` and ``1 - accuracy_words`` are the AERs of these links (one link a target
  word, every gold link sure);
- ``gold_weight``: mean weight on the gold source word;
- ``aer``: alignment error rate (Och and Ney 2003) of the links that are the maximum of their
  row and of their column (``</s>`` left out), against the gold links (all sure):
  ``1 - 2 |A & G| / (|A| + |G|)``.

``rows="producing"`` reads target word ``i`` from the step that produces it (row ``i``, as
the page shows); ``"reading"`` from the step after it, whose input it is (Chen et al. 2020).

``alignment_lab``: what the page's Alignment lab shows by default (``xattn.alignlab``): the
first ``LAB_PAIRS`` held-out pairs, producing rows, each target word linked to its strongest
source *word* (``</s>`` left out), AER against the gold; ``best_head_from_1`` counts layers
and heads from 1, as the card and the page do.

``columns`` in each alignment block says which numbers count ``</s>`` as a column.
"""

from __future__ import annotations

import numpy as np

from xattn.corpus import SentencePair, generate_pairs
from xattn.encdec.api import translate, word_level

__all__ = ["held_out_pairs", "exact_match", "alignment_counts", "lab_scores", "evaluate"]

ROWS = ("producing", "reading")
LAB_PAIRS = 256          # the alignment lab's held-out sentences (xattn.sources.HELDOUT)
COLUMNS = ("accuracy, hits: </s> counted as a column (a word that looks most at </s> is "
           "wrong); accuracy_words, word_hits, aer, links, correct_links: </s> left out")


def held_out_pairs(n: int, seed: int) -> list[SentencePair]:
    """The held-out pairs: ``xattn.corpus.generate_pairs(n, seed=seed)``."""
    return generate_pairs(n, seed=seed)


def exact_match(model, pairs) -> tuple[int, list[tuple[str, str, str]]]:
    """How many greedy translations equal the reference, and the first few that do not
    (source, reference, translation)."""
    correct, wrong = 0, []
    for pair in pairs:
        got = translate(model, " ".join(pair.source), max_new_tokens=48)
        if got == " ".join(pair.target):
            correct += 1
        elif len(wrong) < 5:
            wrong.append((" ".join(pair.source), " ".join(pair.target), got))
    return correct, wrong


def _word_weights(model, pair: SentencePair) -> np.ndarray:
    """(n_layers, n_heads + 1, n_tgt + 1, n_src + 1): heads, then their average; ``</s>``
    last on both sides."""
    tok = model.tokenizer
    src_ids = tok.encode(" ".join(pair.source))
    tgt_ids = tok.encode(" ".join(pair.target), side="target")
    w = word_level(model, model.forward(src_ids, tgt_ids, logits=False).cross_attention,
                   src_ids, tgt_ids)                                 # (L, H, T+1, S+1)
    if w.shape[-2:] != (len(pair.target) + 1, len(pair.source) + 1):
        raise ValueError(f"the pieces of {' '.join(pair.source)!r} do not merge into its words "
                         f"(word-level shape {w.shape[-2:]}).")
    return np.concatenate([w, w.mean(axis=1, keepdims=True)], axis=1)   # (L, H+1, T+1, S+1)


def alignment_counts(model, pairs) -> dict[str, dict[str, np.ndarray]]:
    """Counts summed over ``pairs`` for each way of reading rows (``ROWS``), each
    (n_layers, n_heads + 1) (the last column: the average over heads): ``hits`` (``</s>`` a
    column), ``word_hits`` (``</s>`` left out), ``gold_weight``, ``links`` (|A|),
    ``correct_links`` (|A & G|); and ``words`` (|G|)."""
    totals: dict[str, dict] = {}
    n_words = 0
    for pair in pairs:
        w_all = _word_weights(model, pair)                            # (L, H+1, T+1, S+1)
        n_tgt, n_src = len(pair.target), len(pair.source)
        for rows in ROWS:
            w = w_all[..., 1:n_tgt + 1, :] if rows == "reading" else w_all[..., :n_tgt, :]
            counts = _counts(w, np.array(pair.alignment), n_src)
            totals[rows] = counts if rows not in totals else \
                {k: totals[rows][k] + v for k, v in counts.items()}
        n_words += len(pair.target)
    return {rows: {**c, "words": np.int64(n_words)} for rows, c in totals.items()}


def _counts(w: np.ndarray, gold: np.ndarray, n_src: int) -> dict[str, np.ndarray]:
    """One pair's counts from word-level weights (L, H+1, T, S+1) and gold (T,)."""
    t = np.arange(len(gold))
    best_src = w.argmax(axis=-1)                                      # (L, H+1, T) any column
    words = w[..., :n_src]                                            # (L, H+1, T, S) no </s>
    row_max = words.argmax(axis=-1)                                   # (L, H+1, T)
    col_max = words.argmax(axis=-2)                                   # (L, H+1, S)
    linked = np.take_along_axis(col_max, row_max, axis=-1) == t       # (L, H+1, T) mutual
    return {"hits": (best_src == gold).sum(-1), "word_hits": (row_max == gold).sum(-1),
            "gold_weight": words[..., t, gold].sum(-1, dtype=np.float64),
            "links": linked.sum(-1),
            "correct_links": (linked & (row_max == gold)).sum(-1)}


def _rates(c: dict) -> dict[str, list]:
    words = int(c["words"])
    aer = 1 - 2 * c["correct_links"] / (c["links"] + words)
    return {"columns": COLUMNS,
            "accuracy": np.round(c["hits"] / words, 4).tolist(),
            "accuracy_words": np.round(c["word_hits"] / words, 4).tolist(),
            "gold_weight": np.round(c["gold_weight"] / words, 4).tolist(),
            "aer": np.round(aer, 4).tolist(),
            "hits": c["hits"].tolist(), "word_hits": c["word_hits"].tolist(),
            "links": c["links"].tolist(),
            "correct_links": c["correct_links"].tolist()}


def lab_scores(model, pairs) -> dict:
    """The alignment lab's default scores (``target_argmax``, words only) over ``pairs``:
    ``aer`` (n_layers, n_heads + 1, the last the layer's average) and the best head."""
    from xattn.alignlab import score_heads

    n_heads = model.n_heads
    scores = score_heads([(_word_weights(model, p)[:, :n_heads, :len(p.target),
                                                   :len(p.source)], p) for p in pairs])
    aer = np.column_stack([scores.aer, scores.layer_aer])                    # (L, H+1)
    return {"pairs": len(pairs), "method": scores.method, "aer": np.round(aer, 6).tolist(),
            "best_head_from_1": [k + 1 for k in scores.best_head],
            "best_head_aer": round(float(scores.aer[scores.best_head]), 6)}


def evaluate(model, n: int, seed: int) -> dict:
    """Everything ``metrics.json`` holds, for ``n`` held-out pairs drawn with ``seed``.

    Per-layer lists have one entry per head and a last one for the head average.
    """
    pairs = held_out_pairs(n, seed)
    correct, wrong = exact_match(model, pairs)
    out = {"held_out": {"n": n, "seed": seed},
           "exact_match": {"correct": correct, "total": n, "rate": round(correct / n, 4),
                           "examples_wrong": wrong}}
    # Chance: a uniformly random column (the source words and </s>) for every target word.
    chance = sum(len(p.target) / (len(p.source) + 1) for p in pairs) / sum(len(p.target)
                                                                            for p in pairs)
    for rows, counts in alignment_counts(model, pairs).items():
        out[f"alignment_{rows}"] = {"words": int(counts["words"]),
                                    "chance_accuracy": round(chance, 4), **_rates(counts)}
    out["alignment_lab"] = lab_scores(model, pairs[:LAB_PAIRS])
    return out

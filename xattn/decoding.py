"""A translation being made, step by step, in words a page can show.

`Decoded` is one greedy decoding of a model's source sentence: at each step the token
produced (a piece), whether it was forced, its probability, the five most likely tokens, and
every layer's and head's cross-attention row. `decoded` makes it from a model that decodes
step by step (``greedy``: the NumPy models of ``xattn.encdec``), with tokens forced at chosen
steps given as text ("chien", or a piece "▁chien"). With ``words`` the rows' columns are the
source's words (a word's pieces added up, as the heatmaps' *Whole words* do); the model still
produces one piece a step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from xattn._checks import check_bool, check_int, quote
from xattn.attention import AttentionTrace
from xattn.subwords import SPECIAL_TOKENS, WORD_START, word_groups, word_marker, word_texts

__all__ = ["Decoded", "decoded", "piece_of"]


@dataclass(frozen=True, eq=False)
class Decoded:
    """A greedy decoding of one source sentence, step by step.

    Attributes
    ----------
    src_tokens : tuple of str
        The columns of every row: the source pieces (with ``</s>``), or its words.
    tokens : tuple of str
        The pieces produced, one a step (``tokens[t]`` by step ``t``).
    forced : tuple of bool
    probability : tuple of float
        The model's probability of each produced token at its step.
    top : tuple of tuple of (str, float)
        At each step the five most likely tokens and their probabilities, best first.
    rows : ndarray of shape (n_steps, n_layers, n_heads, n_src)
        Each step's cross-attention rows.
    finished : bool
        Whether ``</s>`` was produced (else the length limit ended it).
    layer_trace : callable (layer) -> xattn.attention.AttentionTrace
        Every intermediate of that decoder layer's cross-attention over this output, one row
        a step: row ``t`` holds step ``t``'s query ``q = x W_Q + b_Q`` (x: what the layer read
        at that position), its scores against every source key, and the same weights as
        ``rows[t, layer]`` (the output read by teacher forcing: the decoder is causal, so each
        position sees what it saw while decoding). Its columns are the source pieces.
    src_pieces : tuple of str
        The source pieces (the columns of ``layer_trace``).
    words : bool
        Whether ``rows`` and ``src_tokens`` are at the level of words.
    lens : callable () -> xattn.encdec.effects.LogitLens, or None
        What each decoder layer would predict at each step if the model stopped there (the
        logit lens), computed when asked.
    marker : str
        The tokenizer's word-start mark (``"▁"``, or ``"Ġ"`` for BART).
    specials : tuple of str
        Pieces that are words of their own.
    """

    src_tokens: tuple[str, ...]
    tokens: tuple[str, ...]
    forced: tuple[bool, ...]
    probability: tuple[float, ...]
    top: tuple
    rows: np.ndarray
    finished: bool
    layer_trace: Callable[[int], AttentionTrace] = field(repr=False, compare=False)
    src_pieces: tuple[str, ...] = ()
    words: bool = False
    lens: Callable[[], object] | None = field(default=None, repr=False, compare=False)
    marker: str = WORD_START
    specials: tuple[str, ...] = SPECIAL_TOKENS

    @property
    def n_steps(self) -> int:
        return len(self.tokens)

    def words_so_far(self, t: int) -> list[tuple[str, bool, bool]]:
        """The target's words up to step ``t`` (pieces joined, ``▁`` dropped), each with
        whether step ``t``'s piece is in it and whether a piece of it was forced."""
        pieces = list(self.tokens[:t + 1])
        groups = word_groups(pieces, specials=self.specials, marker=self.marker)
        forced = np.zeros(groups[-1] + 1, dtype=bool)
        np.logical_or.at(forced, groups, np.array(self.forced[:t + 1], dtype=bool))
        return [(w, k == groups[-1], bool(forced[k]))
                for k, w in enumerate(word_texts(pieces, groups, marker=self.marker))]


def piece_of(model, text: str) -> int:
    """The target-vocabulary id of ``text``: a piece as it is ("▁chien", "</s>"), else the
    first piece of the word as the target tokenizer cuts it (every piece of it known);
    ValueError naming the text when it is not in the vocabulary."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a forced token must be a word or a piece; received {quote(text)}.")
    tok = model.tokenizer
    if tok.piece_id(text) is not None:
        return tok.piece_id(text)
    ids = [tok.piece_id(p) for p in tok.pieces(text.strip(), side="target")]
    if not ids or None in ids:
        raise ValueError(f"{quote(text, 30)} is not in this model's target vocabulary.")
    return ids[0]


def decoded(model, src_ids, forced=(), *, max_new_tokens: int = 64,
            words: bool = False, lens: Callable | None = None) -> Decoded:
    """Greedy decoding of ``src_ids`` with ``forced`` tokens: pairs (step, text), the text a
    piece or a word (its first piece); ``words``: the rows' columns are the source's words.
    ``model.greedy(src_ids, forced=, max_new_tokens=)`` decodes (``xattn.encdec.decode``);
    ``lens``: (src_ids, tgt_ids) -> the logit lens of a pair (the model's own, as
    ``xattn.encdec.effects.logit_lens``), or None for no ``Decoded.lens``."""
    ids = {check_int(t, "a forced step", minimum=0, maximum=max_new_tokens - 1):
           piece_of(model, text) for t, text in forced}
    d = model.greedy(list(src_ids), forced=ids, max_new_tokens=max_new_tokens)
    name = model.pieces
    pieces, produced = tuple(name(d.src_ids)), tuple(name(d.tgt_ids))
    marker = word_marker(pieces + produced)            # "▁" (sentencepiece) or "Ġ" (BART)
    rows = np.stack([s.cross_attention for s in d.steps])                   # (T, L, H, S)
    src = pieces
    if check_bool(words, "words"):
        groups = word_groups(pieces, specials=model.specials, marker=marker)
        starts = np.flatnonzero(np.diff(groups, prepend=-1))               # first piece of each
        rows = np.add.reduceat(rows, starts, axis=-1)        # (T, L, H, S_words): TO a word, sum
        src = tuple(word_texts(pieces, groups, marker=marker))
    return Decoded(src, produced,
                   tuple(s.forced for s in d.steps), tuple(s.probability for s in d.steps),
                   tuple(tuple(zip(name(s.top_ids), s.top_probs.tolist(), strict=True))
                         for s in d.steps),
                   rows, d.finished, _tracer(model, d.src_ids, d.tgt_ids), pieces, words,
                   _lens(lens, d.src_ids, d.tgt_ids), marker, tuple(model.specials))


def _tracer(model, src_ids: tuple, tgt_ids: tuple):
    """``layer -> AttentionTrace`` of the output read by teacher forcing (holding the ids
    only, not the decoding, so that a cached ``Decoded`` is the size ``nbytes`` says)."""
    return lambda layer: model.trace_layer(src_ids, tgt_ids, layer)


def _lens(lens, src_ids: tuple, tgt_ids: tuple):
    """``() -> LogitLens`` of the decoded output (the ids only, as ``_tracer``), or None."""
    return None if lens is None else lambda: lens(src_ids, tgt_ids)

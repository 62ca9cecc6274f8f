"""What changes a translation model's next word: masking source words, switching heads off,
and what each decoder layer would say (the logit lens). NumPy, on this package's models.

Attention weights say where a head looked, not what the output needed (Jain and Wallace 2019;
Wiegreffe and Pinter 2019). These measure it on the model itself, for one target word ``i``
of a teacher-forced pair:

- **masking a source word from the cross-attention**: every decoder layer's
  ``encoder_attn`` runs without that word's pieces among its keys (its weight is 0 and the
  rest of each row shares the unit, exactly as a padding mask does; the encoder still saw the
  whole sentence). The effect is the drop in the probability of target word ``i``;
- **switching a head off**: one cross-attention head of one layer gated to 0 before
  ``out_proj`` (Michel et al. 2019), the same drop;
- **the logit lens**: each decoder layer's output through the output projection, as if the
  model stopped there, and as the last layer's output gets it: Marian and BART end each layer
  with a LayerNorm (post-norm) and the stack with none; mBART, M2M100 and T5 norm before each
  block and end the stack with a norm, which every layer's output goes through first (as
  nostalgebraist's lens does with GPT-2's final norm).

A word's probability is the product of its pieces' (the chain rule), so a word of several
pieces is measured whole. Everything is a teacher-forced pass: row ``i`` is the step that
produces target word ``i``. Every family of ``xattn.encdec`` (``EncoderDecoder``) runs them;
a loaded model offers them as its ``effects`` capability (``xattn.translator.Translator``), and
the logit lens with each decoding step by step (``EncoderDecoder.decode_steps``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int
from xattn.encdec.layers import decoder_layer, norm
from xattn.subwords import merge_words, word_groups, word_marker, word_texts

__all__ = ["Effects", "LogitLens", "effects", "logit_lens", "log_probs"]


@dataclass(frozen=True, eq=False)
class Effects:
    """How much each source word and each head matters to one target word.

    Attributes
    ----------
    src_words, tgt_words : tuple of str
        Words (pieces joined), special tokens included.
    row : int
        The target word measured (from 0).
    attention : ndarray of shape (n_layers, n_heads, n_src_words)
        Its cross-attention row in every layer and head (word level, as the heatmaps show).
    p : float
        The model's probability of target word ``row`` (teacher forcing).
    masked : ndarray of shape (n_src_words,)
        The same probability with source word ``j`` masked from every cross-attention.
    head_off : ndarray of shape (n_layers, n_heads)
        The same probability with one head switched off.
    """

    src_words: tuple[str, ...]
    tgt_words: tuple[str, ...]
    row: int
    attention: np.ndarray
    p: float
    masked: np.ndarray
    head_off: np.ndarray

    @property
    def drop(self) -> np.ndarray:
        """``p - masked``: how much masking each source word costs the word, (n_src_words,)."""
        return self.p - self.masked

    @property
    def head_drop(self) -> np.ndarray:
        """``p - head_off``, (n_layers, n_heads)."""
        return self.p - self.head_off

    def __repr__(self) -> str:
        return (f"Effects(row={self.row}, word={self.tgt_words[self.row]!r}, p={self.p:.3f}, "
                f"most={self.src_words[int(np.argmax(self.drop))]!r})")


@dataclass(frozen=True, eq=False)
class LogitLens:
    """What each decoder layer would predict at each step.

    Attributes
    ----------
    top_ids : ndarray of int, shape (n_layers, n_steps, k)
    top_tokens : ndarray of str, shape (n_layers, n_steps, k)
        The same as pieces.
    top_probs : ndarray of shape (n_layers, n_steps, k)
        Best first; the last layer's are the model's own.
    chosen : ndarray of shape (n_layers, n_steps)
        Each layer's probability of the token the model produced at that step.
    """

    top_ids: np.ndarray
    top_tokens: np.ndarray
    top_probs: np.ndarray
    chosen: np.ndarray


def _stack(model, enc: np.ndarray, tgt_ids, keep=None, gates=None) -> list[np.ndarray]:
    """Every decoder layer's output, (n_layers, T, d_model) as a list, the stack's final norm
    applied to each (where the family has one), over the encoder rows ``keep`` (all by
    default: a source token left out is masked from every cross-attention)."""
    source = enc if keep is None else enc[keep]                            # (S', d_model)
    y = model.embed([model.config.decoder_start_token_id, *tgt_ids[:-1]], "decoder")  # (T, d)
    bias = model.self_bias("decoder", len(y))                      # (h, T, T): T5's, or None
    final = model.final_norm["decoder"]
    outs = []
    for i, layer in enumerate(model.decoder_layers):
        y, _, _, _ = decoder_layer(y, layer, model.act, model.family.pre_norm,
                                   layer.encoder_attn.keys_values(source), None,
                                   None if gates is None else gates[i], bias)
        outs.append(y if final is None else norm(y, final))
    return outs


def log_probs(model, h: np.ndarray) -> np.ndarray:
    """Log-softmax of the logits of decoder states ``h`` (n, d_model): (n, vocab), float64."""
    z = model.logits(np.asarray(h, np.float32)).astype(np.float64)          # (n, V)
    z -= z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _word_p(model, h: np.ndarray, tgt_ids, pieces: np.ndarray) -> float:
    """The probability of the word made of target pieces ``pieces``: the product of each
    piece's probability at its step."""
    lp = log_probs(model, h[pieces])                                        # (n_pieces, V)
    return float(np.exp(lp[np.arange(len(pieces)), np.asarray(tgt_ids)[pieces]].sum()))


def _groups(pieces, specials, marker: str, words: bool) -> np.ndarray:
    return (word_groups(pieces, specials=specials, marker=marker) if words else
            np.arange(len(pieces)))


def effects(model, src_ids, tgt_ids, row: int, *, words: bool = True) -> Effects:
    """Each source word masked, and each head switched off, against target word ``row``.

    Parameters
    ----------
    model : xattn.encdec.EncoderDecoder
    src_ids, tgt_ids : sequence of int
        The pair, as the tokenizer encodes it (each ending with ``</s>``).
    row : int
        The target word (from 0; ``</s>`` is a word).
    words : bool, default True
        Words (pieces joined) or, False, each piece on its own.

    Returns
    -------
    Effects
    """
    src_ids = list(src_ids)
    tgt_ids = model.check_ids(tgt_ids, "tgt_ids", model.config.decoder_vocab_size)
    src_pieces, tgt_pieces = model.pieces(src_ids), model.pieces(tgt_ids)
    marker = word_marker(src_pieces + tgt_pieces)     # "▁" (sentencepiece) or "Ġ" (BART)
    src_groups = _groups(src_pieces, model.specials, marker, words)
    tgt_groups = _groups(tgt_pieces, model.specials, marker, words)
    row = check_int(row, "row", minimum=0, maximum=int(tgt_groups[-1]))
    pieces = np.flatnonzero(tgt_groups == row)                              # the word's steps
    upto = tgt_ids[:pieces[-1] + 1]                 # later steps cannot change this word
    enc = model.encode(src_ids)                                             # (S, d_model)

    def p_of(keep=None, gates=None) -> float:
        return _word_p(model, _stack(model, enc, upto, keep, gates)[-1], upto, pieces)

    run = model.forward(src_ids, upto, logits=False)
    attention = merge_words(run.cross_attention, src_groups,
                            tgt_groups[:len(upto)])[..., row, :]             # (L, H, S_words)
    masked = np.array([p_of(keep=src_groups != w) for w in range(int(src_groups[-1]) + 1)])
    head_off = np.ones((model.n_layers, model.n_heads))
    for layer, h in np.ndindex(head_off.shape):
        gates = np.ones(head_off.shape, np.float32)
        gates[layer, h] = 0
        head_off[layer, h] = p_of(gates=gates)
    src, tgt = ((tuple(word_texts(p, g, marker=marker)) if words else tuple(p))
                for p, g in ((src_pieces, src_groups), (tgt_pieces, tgt_groups)))
    return Effects(src, tgt, row, attention, p_of(), masked, head_off)


def logit_lens(model, src_ids, tgt_ids, *, k: int = 5) -> LogitLens:
    """Each decoder layer's output through the output projection, at every step of the
    teacher-forced pair: its ``k`` likeliest tokens and its probability of the one produced.
    """
    k = check_int(k, "k", minimum=1, maximum=50)
    tgt_ids = model.check_ids(tgt_ids, "tgt_ids", model.config.decoder_vocab_size)
    outs = _stack(model, model.encode(list(src_ids)), tgt_ids)
    steps = np.arange(len(tgt_ids))
    top_ids, top_probs, chosen = [], [], []
    for h in outs:                                                         # (T, d_model)
        p = np.exp(log_probs(model, h))                                    # (T, V)
        top = np.argpartition(-p, k - 1, axis=-1)[:, :k]       # (T, k): no sort of the vocabulary
        order = np.argsort(-np.take_along_axis(p, top, axis=-1), axis=-1, kind="stable")
        best = np.take_along_axis(top, order, axis=-1)                      # (T, k), best first
        top_ids.append(best)
        top_probs.append(np.take_along_axis(p, best, axis=-1))
        chosen.append(p[steps, tgt_ids])
    ids = np.stack(top_ids)                                                 # (L, T, k)
    names = np.array(model.pieces(ids.ravel().tolist())).reshape(ids.shape)
    return LogitLens(ids, names, np.stack(top_probs), np.stack(chosen))

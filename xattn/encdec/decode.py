"""Greedy decoding, one step at a time, with what each step saw and what it could have said.

Each step ``t`` produces target token ``t``: the decoder reads the tokens before it (with a
key/value cache, only the newest one is computed), every layer's cross-attention gives one new
row per head, and the output projection gives the next token's probabilities. A token may be
*forced* at any step (``forced={t: token_id}``): the steps before ``t`` are untouched and the
ones after it follow from it, so a page can ask "what if the model had said this instead?".
A translation starts with the tokens its family starts one with (the target language's code
for mBART-50, M2M100 and NLLB; ``forced_bos_token_id`` for BART), forced as transformers'
generation forces them. Marian never chooses ``<pad>`` (its start token), as opus-mt's
generation config forbids it (``bad_words_ids``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_bool, check_int

__all__ = ["DecodeStep", "Decoding", "decode", "start_tokens", "check_forced", "decode_step"]


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """Decoder step ``position``: the token it produced, its options and its cross-attention.

    Attributes
    ----------
    position : int
        Target position (0-based) of the token produced.
    token_id : int
        The token taken: the most probable one, or the forced one.
    forced : bool
    probability : float
        The model's probability of ``token_id`` at this step.
    top_ids : ndarray of int64, shape (top_k,)
        The most probable next tokens, best first (``<pad>`` left out).
    top_probs : ndarray of float64, shape (top_k,)
    cross_attention : ndarray of shape (n_layers, n_heads, n_src)
        Every layer's and head's cross-attention row for this step.
    """

    position: int
    token_id: int
    forced: bool
    probability: float
    top_ids: np.ndarray
    top_probs: np.ndarray
    cross_attention: np.ndarray


@dataclass(frozen=True, eq=False)
class Decoding:
    """A greedy decoding, step by step.

    Attributes
    ----------
    src_ids : tuple of int
    tgt_ids : tuple of int
        The tokens produced, up to and including ``</s>`` when it was reached.
    steps : tuple of DecodeStep
        One per token of ``tgt_ids``.
    finished : bool
        Whether ``</s>`` was produced (else ``max_new_tokens`` ran out).
    """

    src_ids: tuple[int, ...]
    tgt_ids: tuple[int, ...]
    steps: tuple[DecodeStep, ...]
    finished: bool

    @property
    def cross_attention(self) -> np.ndarray:
        """The steps' rows stacked: (n_layers, n_heads, n_tgt, n_src), as a teacher-forced
        pass on ``tgt_ids`` gives them."""
        return np.stack([s.cross_attention for s in self.steps], axis=2)

    def __repr__(self) -> str:
        return (f"Decoding(n_src={len(self.src_ids)}, n_tgt={len(self.tgt_ids)}, "
                f"finished={self.finished}, forced={[s.position for s in self.steps if s.forced]})")


def check_forced(forced, max_new_tokens: int, vocab: int) -> dict[int, int]:
    if forced is None:
        return {}
    if not isinstance(forced, dict):
        raise TypeError(f"forced must be a dict {{position: token_id}}; received "
                        f"{type(forced).__name__}.")
    return {check_int(t, "each position of forced", minimum=0, maximum=max_new_tokens - 1):
            check_int(i, "each token id of forced", minimum=0, maximum=vocab - 1)
            for t, i in forced.items()}


def decode(model, src_ids, *, max_new_tokens: int = 64, forced=None, top_k: int = 5,
           head_mask=None, use_cache: bool = True) -> Decoding:
    """Greedy decoding (one beam) of ``src_ids``, step by step.

    Parameters
    ----------
    model : xattn.encdec.EncoderDecoder
    src_ids : sequence of int
        Source token ids ending with ``</s>``.
    max_new_tokens : int, default 64
        Longest output; also limited by the model's positions.
    forced : dict of int to int, optional
        ``{position: token_id}``: take this token at that step instead of the most probable
        one. Positions after the output has ended are never reached.
    top_k : int, default 5
    head_mask : array_like of shape (n_layers, n_heads), optional
        Cross-attention gates (0 switches a head off), as for ``EncoderDecoder.forward``.
    use_cache : bool, default True
        False recomputes every earlier position at each step (slower; the same numbers).

    Returns
    -------
    Decoding
    """
    c = model.config
    limit = c.max_position_embeddings
    max_new = check_int(max_new_tokens, "max_new_tokens", minimum=1, maximum=limit)
    forced = {**dict(enumerate(start_tokens(model)[:max_new])),
              **check_forced(forced, max_new, c.decoder_vocab_size)}
    top_k = check_int(top_k, "top_k", minimum=1, maximum=c.decoder_vocab_size - 1)
    gates = model.check_head_mask(head_mask)
    never = c.pad_token_id if model.family.never_pad else None
    enc = model.encode(src_ids)                                             # (S, d_model)
    sources = [layer.encoder_attn.keys_values(enc) for layer in model.decoder_layers]
    caches = [None] * model.n_layers
    produced, steps = [], []
    for t in range(max_new):
        if check_bool(use_cache, "use_cache"):
            y = model.embed([produced[-1] if produced else c.decoder_start_token_id],
                            "decoder", past=t)                              # (1, d_model)
            y, _, w, caches = model.decoder(y, sources, caches, t, gates)   # w: (L, h, 1, S)
        else:
            y = model.embed([c.decoder_start_token_id, *produced], "decoder")
            y, _, w, _ = model.decoder(y, sources, [None] * model.n_layers, 0, gates)
        steps.append(decode_step(t, model.logits(y[-1:])[0], w[:, :, -1], forced.get(t),
                                 top_k, never))
        produced.append(steps[-1].token_id)
        if produced[-1] == c.eos_token_id:
            break
    return Decoding(tuple(int(i) for i in src_ids), tuple(produced), tuple(steps),
                    produced[-1] == c.eos_token_id)


def start_tokens(model) -> tuple[int, ...]:
    """The tokens a translation starts with: the tokenizer's (a target language's code), else
    the config's ``forced_bos_token_id`` (BART), else none."""
    prefix = tuple(model.tokenizer.target_prefix)
    if prefix:
        return prefix
    bos = model.config.forced_bos_token_id
    return (bos,) if bos >= 0 else ()


def decode_step(t: int, logits: np.ndarray, rows: np.ndarray, forced: int | None, top_k: int,
                never: int | None) -> DecodeStep:
    """One step's record from its logits (V,) and cross-attention rows (L, h, S)."""
    z = logits.astype(np.float64)
    if never is not None:
        z[never] = -np.inf                                                  # <pad>: never next
    p = np.exp(z - z.max())
    p /= p.sum()
    best = np.argpartition(-p, top_k)[:top_k]                               # (top_k,) unsorted
    top = best[np.lexsort((best, -p[best]))]           # best first; ties: lower id, as argmax
    token = int(top[0]) if forced is None else forced
    return DecodeStep(t, token, forced is not None, float(p[token]), top, p[top], rows)

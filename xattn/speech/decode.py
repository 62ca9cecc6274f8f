"""Greedy transcription with a key/value cache, timestamps off, as transformers' Whisper
``generate`` does it with one beam::

    prompt   = start token, the forced ones (language, task), <|notimestamps|>
               (``Generation.prompt``), or the prompt given; a multilingual model whose
               forced ids name no language takes the language token most probable after
               the start token (transformers' ``detect_language``)
    each step: the decoder reads the newest token only (self-attention keys and values of the
               earlier ones are cached); suppress_tokens never win, begin_suppress_tokens not
               at the first step; the most probable token is taken; end of text stops it

Each step keeps every layer's and head's cross-attention row: the rows of the tokens
produced, stacked, equal a teacher-forced pass on ``prompt + tokens[:-1]`` (its last rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int

__all__ = ["Transcription", "detect_language", "greedy"]


@dataclass(frozen=True, eq=False)
class Transcription:
    """A greedy transcription of one clip.

    Attributes
    ----------
    prompt : tuple of int
        The tokens it started from.
    tokens : tuple of int
        The tokens produced after the prompt, up to and including end of text when reached.
    cross_attentions : ndarray of shape (n_layers, n_heads, n_tokens, n_src)
        Row t: the step that produced ``tokens[t]``.
    finished : bool
        Whether end of text was produced (else ``max_new_tokens`` ran out).
    """

    prompt: tuple[int, ...]
    tokens: tuple[int, ...]
    cross_attentions: np.ndarray
    finished: bool

    def __repr__(self) -> str:
        return (f"Transcription(tokens={len(self.tokens)}, finished={self.finished}, "
                f"cross_attentions={self.cross_attentions.shape})")


def _choose(logits: np.ndarray, banned: np.ndarray) -> int:
    scores = logits.copy()
    scores[banned] = -np.inf
    return int(np.argmax(scores))


def detect_language(model, enc: np.ndarray) -> int:
    """The language token most probable after the start token, over the model's languages
    (``Generation.lang_ids``), for the encoder output ``enc`` (n_src, d_model)."""
    lang = np.asarray(model.generation.lang_ids, np.int64)
    y, _, _, _ = model.decoder(model.embed([model.generation.decoder_start_token_id]), enc,
                               [None] * model.n_layers)
    return int(lang[np.argmax(model.logits(y)[0, lang])])


def greedy(model, features, *, max_new_tokens: int = 64, prompt=None) -> Transcription:
    """Transcribe one clip's features greedily.

    Parameters
    ----------
    model : xattn.speech.Whisper
    features : array_like of shape (num_mel_bins, n_frames)
        ``model.features(audio)``.
    max_new_tokens : int, default 64
        At most this many tokens after the prompt; prompt and tokens together fit the
        decoder's positions (``max_target_positions``).
    prompt : sequence of int, optional
        The first tokens; default ``model.generation.prompt()``.

    Returns
    -------
    Transcription

    Raises
    ------
    ValueError
        Features of the wrong shape, a prompt id beyond the vocabulary, or more tokens than
        the decoder has positions for.
    """
    gen = model.generation
    if prompt is None:       # a detected language takes one place: any language's length
        prompt_or_plan = gen.prompt(language=gen.lang_ids[0] if gen.detects_language else None)
    ids = model.check_ids(prompt_or_plan if prompt is None else prompt)
    room = model.config.max_target_positions - len(ids)
    max_new = check_int(max_new_tokens, "max_new_tokens", minimum=1, maximum=max(room, 1))
    if room < 1:
        raise ValueError(f"the prompt holds {len(ids)} tokens, all of the decoder's "
                         f"{model.config.max_target_positions} positions; give a shorter one.")
    enc = model.encode(features)                                          # (S, d_model)
    if prompt is None and gen.detects_language:
        ids = list(gen.prompt(language=detect_language(model, enc)))
    always = np.asarray(gen.suppress_tokens, np.int64)
    first = np.asarray(gen.suppress_tokens + gen.begin_suppress_tokens, np.int64)
    caches, past, new, rows, tokens = [None] * model.n_layers, 0, ids, [], []
    finished = False
    for step in range(max_new):
        y, _, weights, caches = model.decoder(model.embed(new, past), enc, caches)
        past += len(new)
        rows.append(weights[:, :, -1])                                    # (L, h, S)
        token = _choose(model.logits(y[-1:])[0], first if step == 0 else always)
        tokens.append(token)
        if token == gen.eos_token_id:
            finished = True
            break
        new = [token]
    return Transcription(tuple(ids), tuple(tokens), np.stack(rows, axis=2), finished)

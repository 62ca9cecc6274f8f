"""From two sentences and a handful of settings to attention weights: what one view computes.

``Settings`` holds only small values (strings, ints, bools), so a cache can be keyed on it and a
URL can carry it. ``run(settings)`` tokenizes, embeds, masks and attends; it raises
``ValueError`` with a message written for the person at the keyboard.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xattn._checks import check_tokens
from xattn.attention import MultiHeadCrossAttention
from xattn.embedder import EMBEDDER_MODES, ToyEmbedder
from xattn.masks import MASK_MODES, local_window_mask, padding_mask, wait_k_mask
from xattn.tokenize import TOKENIZER_MODES, tokenize

__all__ = ["Settings", "Run", "run", "run_tokens", "MAX_TOKENS",
           "D_MODEL_CHOICES", "MAX_HEADS", "head_choices", "EMBEDDER_SEED"]

MAX_TOKENS = 64
D_MODEL_CHOICES = (8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
MAX_HEADS = 16   # small multiples stay readable up to 16 heads
EMBEDDER_SEED = 0  # token vectors stay fixed: the seed setting changes the attention weights only


def head_choices(d_model: int) -> list[int]:
    """Head counts that divide ``d_model``, up to ``MAX_HEADS``."""
    return [h for h in range(1, min(d_model, MAX_HEADS) + 1) if d_model % h == 0]


@dataclass(frozen=True)
class Settings:
    """Everything that determines one picture. Defaults are the page's defaults."""

    src: str = "the black cat sat on the mat"
    tgt: str = "le chat noir s'est assis sur le tapis"
    d_model: int = 32
    n_heads: int = 4
    seed: int = 0
    tokenizer: str = "words"
    embedder: str = "token"
    positional: bool = True
    mask_mode: str = "none"      # one of MASK_MODES
    padded: tuple[int, ...] = field(default_factory=tuple)  # source positions masked ("padding")
    wait_k: int = 3              # "wait-k": target i sees the first i + k source tokens
    window: int = 1              # "window": tokens either side of the stretched diagonal


@dataclass(frozen=True)
class Run:
    """The result of one settings: tokens, inputs, mask and the attention's outputs.

    Attributes
    ----------
    src_tokens, tgt_tokens : list of str
    encoder_output : ndarray of shape (n_src, d_model)
    decoder_state : ndarray of shape (n_tgt, d_model)
    mask : ndarray of bool, shape (n_tgt, n_src)
        True where the target token may attend the source token (all True when unmasked).
    weights : ndarray of shape (n_heads, n_tgt, n_src)
    output : ndarray of shape (n_tgt, d_model)
    settings : Settings
    """

    src_tokens: list[str]
    tgt_tokens: list[str]
    encoder_output: np.ndarray
    decoder_state: np.ndarray
    mask: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    settings: Settings

    @property
    def empty_rows(self) -> np.ndarray:
        """Target positions that have no source token to attend to, shape (k,)."""
        return np.flatnonzero(~self.mask.any(axis=1))

    def module(self) -> MultiHeadCrossAttention:
        """The attention module of this run (rebuilt from the seed: cheap and deterministic)."""
        s = self.settings
        return MultiHeadCrossAttention(s.d_model, s.n_heads, seed=s.seed)


def _tokens(text: str, side: str, mode: str) -> list[str]:
    tokens = tokenize(text, mode)
    if not tokens:
        raise ValueError(f"The {side} sentence is empty: type at least one word.")
    if len(tokens) > MAX_TOKENS:
        extra = len(tokens) - MAX_TOKENS
        raise ValueError(f"The {side} sentence has {len(tokens)} tokens; the limit is "
                         f"{MAX_TOKENS}. Shorten it by {extra} token{'s' if extra > 1 else ''}.")
    return tokens


def _check(s: Settings) -> None:
    if s.d_model not in D_MODEL_CHOICES:
        raise ValueError(f"d_model must be one of {D_MODEL_CHOICES}; received {s.d_model}.")
    if s.n_heads not in head_choices(s.d_model):
        raise ValueError(f"With d_model = {s.d_model} the number of heads must be one of "
                         f"{head_choices(s.d_model)}; received {s.n_heads}.")
    for name, value, choices in (("tokenizer", s.tokenizer, TOKENIZER_MODES),
                                 ("embedder", s.embedder, EMBEDDER_MODES),
                                 ("mask_mode", s.mask_mode, MASK_MODES)):
        if value not in choices:
            raise ValueError(f"{name} must be one of {choices}; received {value!r}.")


def build_mask(s: Settings, n_tgt: int, n_src: int) -> np.ndarray:
    """The (n_tgt, n_src) boolean mask the settings ask for (True = may attend)."""
    if s.mask_mode == "padding":
        keep = padding_mask(n_src, [p for p in s.padded if p < n_src])
        return np.broadcast_to(keep, (n_tgt, n_src)).copy()
    if s.mask_mode == "wait-k":
        return wait_k_mask(n_tgt, n_src, s.wait_k)
    if s.mask_mode == "window":
        return local_window_mask(n_tgt, n_src, s.window)
    return np.ones((n_tgt, n_src), dtype=bool)


def run(s: Settings) -> Run:
    """Tokenize, embed, mask and attend.

    Raises
    ------
    ValueError
        For an empty sentence, too many tokens, or settings outside their choices; the message
        says what to change.
    """
    _check(s)
    return run_tokens(_tokens(s.src, "source", s.tokenizer),
                      _tokens(s.tgt, "target", s.tokenizer), s)


def run_tokens(src: list[str], tgt: list[str], s: Settings) -> Run:
    """`run` on tokens given as they are (``s.src``, ``s.tgt`` and the tokenizer are not
    used): random weights for the tokens of another source, e.g. a file or a real model."""
    _check(s)
    src, tgt = check_tokens(src, None, "src"), check_tokens(tgt, None, "tgt")
    if not src or not tgt:
        raise ValueError("Both sides need at least one token.")
    embedder = ToyEmbedder(s.d_model, seed=EMBEDDER_SEED, positional=s.positional,
                           mode=s.embedder)
    x_s, x_t = embedder.embed(src), embedder.embed(tgt)
    mask = build_mask(s, len(tgt), len(src))
    mha = MultiHeadCrossAttention(s.d_model, s.n_heads, seed=s.seed)
    output, weights = mha(x_t, x_s, mask)
    return Run(src, tgt, x_s, x_t, mask, weights, output, s)

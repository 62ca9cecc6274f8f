"""A toy embedder: tokens to vectors through a stable hash, with optional positions.

No training and no vocabulary: every token's vector is drawn from a generator seeded by a
BLAKE2b hash of (seed, token), so the same token gives the same vector in every process and on
every machine (Python's ``hash()`` is salted per process and would not).
"""

from __future__ import annotations

import hashlib
import math
import unicodedata

import numpy as np

from xattn._checks import check_bool, check_int, check_seed
from xattn.cache import ByteLRU

__all__ = ["ToyEmbedder", "EMBEDDER_MODES", "sinusoidal_positions"]

EMBEDDER_MODES = ("token", "ngram")
_NGRAM_SIZES = (2, 3)
# Token vectors shared by every session of a server: 16 MiB is 4,096 vectors at d_model 512,
# far more than one page (two 64-token sentences, or their n-grams) needs.
VECTOR_CACHE = ByteLRU(16 << 20)


def _hashed_vector(text: str, seed: int, d_model: int) -> np.ndarray:
    """Unit-variance vector of ``d_model`` entries determined by (seed, text) alone."""
    return VECTOR_CACHE.get_or_make((text, seed, d_model),
                                    lambda: _draw_vector(text, seed, d_model))


def _draw_vector(text: str, seed: int, d_model: int) -> np.ndarray:
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=16,
                             key=seed.to_bytes(16, "little", signed=True)).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    vec = rng.standard_normal(d_model)
    vec.flags.writeable = False  # cached and shared: never to be modified
    return vec


def _char_ngrams(token: str) -> list[str]:
    """Character 2- and 3-grams of the lower-cased token with boundary marks: <ca, cat, at>..."""
    marked = f"<{unicodedata.normalize('NFC', token).lower()}>"
    return [marked[i:i + n] for n in _NGRAM_SIZES for i in range(len(marked) - n + 1)]


def sinusoidal_positions(n: int, d_model: int) -> np.ndarray:
    """Sinusoidal positional encoding of Vaswani et al. (2017).

    Returns
    -------
    ndarray of shape (n, d_model)
        ``PE[p, 2i] = sin(p / 10000^(2i/d_model))``, ``PE[p, 2i+1] = cos(...)``.
    """
    pos = np.arange(n, dtype=np.float64)[:, None]                     # (n, 1)
    freq = np.exp(-math.log(10000.0) * np.arange(0, d_model, 2) / d_model)  # (ceil(d/2),)
    angles = pos * freq                                                 # (n, ceil(d/2))
    pe = np.empty((n, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe


class ToyEmbedder:
    """Deterministic token vectors for demonstrations.

    Parameters
    ----------
    d_model : int
        Vector width.
    seed : int, default 0
        Changes every token's vector; the same (token, seed) always gives the same vector.
    positional : bool, default True
        Add the sinusoidal positional encoding, so a repeated word at two positions differs.
    mode : {"token", "ngram"}, default "token"
        ``"token"``: each distinct token string has its own random vector (unrelated tokens are
        nearly orthogonal). ``"ngram"``: the sum of the vectors of the token's character 2- and
        3-grams (lower-cased), scaled to the same norm ``sqrt(d_model)``, so related spellings
        ("nation" and "nations", "cat" and "chat") get similar vectors.

    Examples
    --------
    >>> emb = ToyEmbedder(16, seed=0, positional=False, mode="ngram")
    >>> x = emb.embed(["nation", "nations", "tapis"])
    >>> x.shape
    (3, 16)
    >>> cos = lambda a, b: a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    >>> bool(cos(x[0], x[1]) > cos(x[0], x[2]))
    True
    """

    def __init__(self, d_model: int, *, seed: int = 0, positional: bool = True,
                 mode: str = "token") -> None:
        self.d_model = check_int(d_model, "d_model", minimum=1)
        self.seed = check_seed(seed)
        self.positional = check_bool(positional, "positional")
        if mode not in EMBEDDER_MODES:
            raise ValueError(f"mode must be one of {EMBEDDER_MODES}; received {mode!r}.")
        self.mode = mode

    def __repr__(self) -> str:
        return (f"ToyEmbedder(d_model={self.d_model}, seed={self.seed}, "
                f"positional={self.positional}, mode={self.mode!r})")

    def token_vector(self, token: str) -> np.ndarray:
        """The position-free vector of one token, shape (d_model,), entries of unit variance."""
        if self.mode == "token":
            return _hashed_vector(token, self.seed, self.d_model).copy()
        grams = _char_ngrams(token)
        total = np.sum([_hashed_vector(g, self.seed, self.d_model) for g in grams], axis=0)
        return total * (math.sqrt(self.d_model) / np.linalg.norm(total))  # same norm as "token"

    def embed(self, tokens: list[str]) -> np.ndarray:
        """Vectors for a token sequence.

        Parameters
        ----------
        tokens : list of str

        Returns
        -------
        ndarray of shape (n_tokens, d_model), float64
            Token vectors plus, when ``positional``, the encoding of positions 0..n-1.
        """
        if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
            kinds = sorted({type(t).__name__ for t in tokens}) if not isinstance(tokens, str) \
                else ["one str"]
            raise TypeError("tokens must be a list of str (use xattn.tokenize(text) first); "
                            f"received {type(tokens).__name__} of {', '.join(kinds)}.")
        out = np.zeros((len(tokens), self.d_model))
        for i, token in enumerate(tokens):
            out[i] = self.token_vector(token)
        if self.positional:
            out += sinusoidal_positions(len(tokens), self.d_model)
        return out

"""Train the cross-attention to align the toy corpus, with a hand-written backward pass and Adam.

The task: at every target position, attention must fetch the source word that the target
word translates (``xattn.corpus`` knows the gold alignment of every generated pair).

**What the decoder state is.** The query at target position ``i`` is the embedding of target
word ``i`` plus the sinusoidal encoding of ``i`` (``ToyEmbedder(positional=True)``): the state
of a decoder that has just read the word it produces, as when alignments are read off a
translation model. That gives two cues and lets heads specialise in them. *Meaning* ("chat"
looks for "cat") finds the word wherever the grammar moved it but cannot tell two "the"s
apart; *position* tells them apart but misses the swapped adjective and noun. A position-only
query could not align every sentence: with optional adjectives the word at target position 3
is sometimes a verb, sometimes a determiner. The previous target word (what a real decoder
sees) would turn alignment into translation, which one attention layer cannot learn. In the
default run (seed 0) head 1 aligns by meaning (100% on the swapped nouns and adjectives) and
head 2 leans on position (38% on those, 83% on repeated words); heads 0 and 3 mix both
(``alignment_by_head``; ``benchmarks/bench_train.py``).

**The objective.** The output at target position ``i`` regresses the encoder vector of its
aligned source word, token *and position* (mean squared error), so nothing short of putting
the attention on that very word, the right "the" included, reaches zero loss. There is no
residual path: the query never sees the source, so attention is the only route to the
answer. ``objective="ce"`` instead classifies the source word from ``output @ E.T /
sqrt(d_model)`` (``E``: the source lexicon's token vectors); it reaches low loss while the
attention stays spread, since a partial mixture already wins the argmax of the readout
(``benchmarks/bench_train.py`` measures both).

**What is trained.** Only ``W_Q, W_K, W_V, W_O``; the embeddings are fixed ``ToyEmbedder``
vectors. A trained model is an ordinary ``MultiHeadCrossAttention`` with its weights replaced,
so every figure that shows random weights shows trained ones the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from xattn.attention import MultiHeadCrossAttention
from xattn.corpus import SOURCE_WORDS, SentencePair, generate_pairs
from xattn.embedder import ToyEmbedder

__all__ = ["OBJECTIVES", "WEIGHT_NAMES", "TrainConfig", "TrainResult", "Batch", "make_batch",
           "embed_pair", "loss_and_gradients", "train", "alignment_accuracy", "chance_accuracy",
           "alignment_by_head", "ALIGNMENT_MEASURES"]

OBJECTIVES = ("mse", "ce")
WEIGHT_NAMES = ("W_Q", "W_K", "W_V", "W_O")
_BETAS, _EPS = (0.9, 0.999), 1e-8   # Adam's usual constants
_TRAIN_STREAM, _HELDOUT_STREAM = 1, 2  # seeds of the two sentence streams: (config.seed, k)
# One plain-English line per column of `alignment_by_head`, for the page.
ALIGNMENT_MEASURES = {
    "word_accuracy": "Share of target words whose most-attended source word is their gold "
                     "word (either \"the\" counts when there are two).",
    "exact_accuracy": "Share of target words whose most-attended source word is the gold one "
                      "at the gold position.",
    "moved_accuracy": "Word accuracy on the swapped noun and adjective, where position alone "
                      "points to the wrong word: high for a head that aligns by meaning.",
    "repeated_accuracy": "Exact accuracy on words that occur twice in the source (\"the ... "
                         "the\"), where meaning alone is a coin flip: high for a head that "
                         "uses position.",
    "gold_weight": "Average attention weight on the gold source word (1 = all of it).",
}


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run; equal configs give identical results."""

    d_model: int = 32
    n_heads: int = 4
    steps: int = 100        # Adam updates
    batch_size: int = 32    # sentences per update, freshly drawn (none from the held-out set)
    lr: float = 0.02        # Adam step size; 0.01 ends ~2 points lower after 100 steps
    objective: str = "mse"  # "mse": regress the gold source vector; "ce": classify its word
    seed: int = 0           # initial weights (as MultiHeadCrossAttention(seed=)) and sentences
    embed_seed: int = 0     # ToyEmbedder seed: which random vector each word gets
    n_heldout: int = 256    # held-out test sentences

    def __post_init__(self) -> None:
        for name in ("d_model", "n_heads", "steps", "batch_size", "n_heldout"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1; received {value!r}.")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model must be divisible by n_heads; received d_model="
                             f"{self.d_model}, n_heads={self.n_heads}.")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}; received "
                             f"{self.objective!r}.")
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0; received {self.lr!r}.")


@dataclass(frozen=True)
class Batch:
    """Padded arrays for a list of sentence pairs (B pairs, T = max n_tgt, S = max n_src).

    Attributes
    ----------
    decoder_state : ndarray of shape (B, T, d_model)
        Target word vectors plus positions; zero rows after each sentence's end.
    encoder_output : ndarray of shape (B, S, d_model)
        Source word vectors plus positions; zero rows after each sentence's end.
    encoder_mask : ndarray of bool, shape (B, S)
        True at real source words.
    gold : ndarray of int, shape (B, T)
        Source index of each target word's gold word; -1 at padding and unaligned words.
    source_words : ndarray of str, shape (B, S)
        The source words ("" at padding), to score a guess by word instead of by position.
    gold_ids : ndarray of int, shape (B, T)
        Index of the gold word in ``SOURCE_WORDS`` for the "ce" objective; -1 if none.
    readout : ndarray of shape (len(SOURCE_WORDS), d_model)
        Position-free vectors of ``SOURCE_WORDS``, the classifier of the "ce" objective.
    """

    decoder_state: np.ndarray
    encoder_output: np.ndarray
    encoder_mask: np.ndarray
    gold: np.ndarray
    source_words: np.ndarray
    gold_ids: np.ndarray
    readout: np.ndarray


def embed_pair(pair: SentencePair, embedder: ToyEmbedder) -> tuple[np.ndarray, np.ndarray]:
    """Model inputs for one pair: ``(decoder_state (n_tgt, d_model), encoder_output (n_src,
    d_model))``, each word's vector plus its position, as the training saw them."""
    return embedder.embed(list(pair.target)), embedder.embed(list(pair.source))


def make_batch(pairs: Sequence[SentencePair], embedder: ToyEmbedder) -> Batch:
    """Embed and pad ``pairs`` (a non-empty sequence of SentencePair) into one ``Batch``."""
    if not pairs or not all(isinstance(p, SentencePair) for p in pairs):
        raise ValueError("pairs must be a non-empty sequence of SentencePair; received "
                         f"{type(pairs).__name__} of length {len(pairs)}.")
    n_b, d = len(pairs), embedder.d_model
    n_tgt, n_src = max(len(p.target) for p in pairs), max(len(p.source) for p in pairs)
    x_t, x_s = np.zeros((n_b, n_tgt, d)), np.zeros((n_b, n_src, d))
    keep = np.zeros((n_b, n_src), dtype=bool)
    gold = np.full((n_b, n_tgt), -1)
    words = np.full((n_b, n_src), "", dtype=object)
    vocab = {w: k for k, w in enumerate(SOURCE_WORDS)}
    for b, p in enumerate(pairs):
        x_t[b, :len(p.target)], x_s[b, :len(p.source)] = embed_pair(p, embedder)
        keep[b, :len(p.source)] = True
        gold[b, :len(p.target)] = [-1 if j is None else j for j in p.alignment]
        words[b, :len(p.source)] = p.source
    gold_words = np.take_along_axis(words, np.maximum(gold, 0), axis=1)     # (B, T)
    gold_ids = np.array([[vocab.get(w, -1) for w in row] for row in gold_words]).reshape(gold.shape)
    gold_ids[gold < 0] = -1
    readout = np.stack([embedder.token_vector(w) for w in SOURCE_WORDS])  # (V, d_model)
    return Batch(x_t, x_s, keep, gold, words.astype(str), gold_ids, readout)


def _forward(w: dict, batch: Batch, n_heads: int) -> dict:
    """Batched cross-attention as in ``MultiHeadCrossAttention.trace``, keeping what backward
    needs."""
    x_t, x_s = batch.decoder_state, batch.encoder_output
    n_b, n_tgt, d = x_t.shape
    n_src, d_head = x_s.shape[1], d // n_heads
    scale = 1.0 / math.sqrt(d_head)
    q = (x_t @ w["W_Q"]).reshape(n_b, n_tgt, n_heads, d_head).transpose(0, 2, 1, 3)  # (B,h,T,dh)
    k = (x_s @ w["W_K"]).reshape(n_b, n_src, n_heads, d_head).transpose(0, 2, 1, 3)  # (B,h,S,dh)
    v = (x_s @ w["W_V"]).reshape(n_b, n_src, n_heads, d_head).transpose(0, 2, 1, 3)  # (B,h,S,dh)
    scores = (q @ k.transpose(0, 1, 3, 2)) * scale                            # (B, h, T, S)
    scores = np.where(batch.encoder_mask[:, None, None, :], scores, -np.inf)
    a = np.exp(scores - scores.max(axis=-1, keepdims=True))  # every sentence has a source word
    a /= a.sum(axis=-1, keepdims=True)                                        # (B, h, T, S)
    concat = (a @ v).transpose(0, 2, 1, 3).reshape(n_b, n_tgt, d)            # (B, T, d_model)
    return dict(q=q, k=k, v=v, a=a, concat=concat, y=concat @ w["W_O"], scale=scale)


def _loss_grad_output(y: np.ndarray, batch: Batch, objective: str) -> tuple[float, np.ndarray]:
    """Loss over aligned target rows and its gradient with respect to the output y (B, T, d)."""
    if objective == "mse":
        rows = batch.gold >= 0                                                # (B, T)
        target = np.take_along_axis(batch.encoder_output,
                                    np.maximum(batch.gold, 0)[..., None], axis=1)  # (B, T, d)
        err = (y - target) * rows[..., None]
        n = max(rows.sum(), 1) * y.shape[-1]
        return float((err ** 2).sum() / n), 2.0 * err / n
    rows = batch.gold_ids >= 0
    readout = batch.readout / math.sqrt(y.shape[-1])                          # (V, d_model)
    logits = y @ readout.T                                                    # (B, T, V)
    logits -= logits.max(axis=-1, keepdims=True)
    log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    ids = np.maximum(batch.gold_ids, 0)[..., None]
    n = max(rows.sum(), 1)
    loss = -(np.take_along_axis(log_p, ids, axis=-1)[..., 0] * rows).sum() / n
    d_logits = np.exp(log_p)
    np.put_along_axis(d_logits, ids, np.take_along_axis(d_logits, ids, axis=-1) - 1.0, axis=-1)
    d_logits *= rows[..., None] / n
    return float(loss), d_logits @ readout                                    # (B, T, d_model)


def loss_and_gradients(weights: dict, batch: Batch, *, n_heads: int,
                       objective: str = "mse") -> tuple[float, dict]:
    """Loss of ``weights`` on ``batch`` and its gradient, by a hand-written backward pass.

    Parameters
    ----------
    weights : dict of str to ndarray of shape (d_model, d_model)
        ``"W_Q", "W_K", "W_V", "W_O"``, laid out as in ``MultiHeadCrossAttention``.
    batch : Batch
    n_heads : int
    objective : {"mse", "ce"}

    Returns
    -------
    loss : float
    gradients : dict of str to ndarray of shape (d_model, d_model)
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}; received {objective!r}.")
    f = _forward(weights, batch, n_heads)
    loss, d_y = _loss_grad_output(f["y"], batch, objective)                   # (B, T, d)
    n_b, n_tgt, d = d_y.shape
    d_head = d // n_heads
    flat = lambda x: x.reshape(-1, d)                                         # (B*rows, d)
    g = {"W_O": flat(f["concat"]).T @ flat(d_y)}
    d_heads = (d_y @ weights["W_O"].T).reshape(n_b, n_tgt, n_heads, d_head)
    d_heads = d_heads.transpose(0, 2, 1, 3)                                   # (B, h, T, dh)
    a = f["a"]
    d_a = d_heads @ f["v"].transpose(0, 1, 3, 2)                              # (B, h, T, S)
    d_v = a.transpose(0, 1, 3, 2) @ d_heads                                   # (B, h, S, dh)
    d_s = a * (d_a - (d_a * a).sum(axis=-1, keepdims=True)) * f["scale"]      # softmax backward
    d_q = d_s @ f["k"]                                                        # (B, h, T, dh)
    d_k = d_s.transpose(0, 1, 3, 2) @ f["q"]                                  # (B, h, S, dh)
    merge = lambda x: flat(x.transpose(0, 2, 1, 3))                           # (B*rows, d)
    g["W_Q"] = flat(batch.decoder_state).T @ merge(d_q)
    g["W_K"] = flat(batch.encoder_output).T @ merge(d_k)
    g["W_V"] = flat(batch.encoder_output).T @ merge(d_v)
    return loss, g


@dataclass(frozen=True)
class TrainResult:
    """What ``train`` returns: the trained model, its untrained start, and the loss curve.

    Attributes
    ----------
    config : TrainConfig
    model : MultiHeadCrossAttention
        The trained weights.
    untrained : MultiHeadCrossAttention
        The same model before training (``MultiHeadCrossAttention(seed=config.seed)``).
    embedder : ToyEmbedder
        The fixed word vectors the model was trained with; use it (or ``embed_pair``) to feed
        the model new pairs.
    losses : ndarray of shape (steps,)
        Training loss of each update's batch, before the update.
    heldout : tuple of SentencePair
        Test sentences never seen in training.
    """

    config: TrainConfig
    model: MultiHeadCrossAttention
    untrained: MultiHeadCrossAttention
    embedder: ToyEmbedder
    losses: np.ndarray = field(repr=False)
    heldout: tuple[SentencePair, ...] = field(repr=False)


def _training_pairs(rng: np.random.Generator, n: int, exclude: set) -> list[SentencePair]:
    pairs: list[SentencePair] = []
    while len(pairs) < n:
        pairs += [p for p in generate_pairs(n - len(pairs), seed=rng) if p.source not in exclude]
    return pairs


def train(config: TrainConfig | None = None, *,
          callback: Callable[[int, float], object] | None = None) -> TrainResult:
    """Train ``MultiHeadCrossAttention`` weights to align the toy corpus, with Adam.

    Parameters
    ----------
    config : TrainConfig, optional
        Defaults to ``TrainConfig()``: d_model 32, 4 heads, 100 steps of 32 sentences.
    callback : callable, optional
        Called as ``callback(step, loss)`` after each update, ``step`` running from 1 to
        ``config.steps``; e.g. to move a progress bar or extend a live loss curve.

    Returns
    -------
    TrainResult
        Bit-for-bit the same for equal configs on the same machine.

    Examples
    --------
    >>> from xattn.corpus import translate
    >>> result = train(TrainConfig(steps=5, n_heldout=16), callback=lambda step, loss: None)
    >>> result.losses.shape
    (5,)
    >>> x_t, x_s = embed_pair(translate("the red cat sees the dog"), result.embedder)
    >>> _, weights = result.model(x_t, x_s)
    >>> weights.shape  # (n_heads, n_tgt, n_src)
    (4, 6, 6)
    """
    config = TrainConfig() if config is None else config
    if not isinstance(config, TrainConfig):
        raise ValueError(f"config must be a TrainConfig; received {type(config).__name__}.")
    embedder = ToyEmbedder(config.d_model, seed=config.embed_seed)
    heldout = tuple(generate_pairs(config.n_heldout,
                                   seed=np.random.default_rng((config.seed, _HELDOUT_STREAM))))
    exclude = {p.source for p in heldout}
    rng = np.random.default_rng((config.seed, _TRAIN_STREAM))
    untrained = MultiHeadCrossAttention(config.d_model, config.n_heads, seed=config.seed)
    w = {name: getattr(untrained, name).copy() for name in WEIGHT_NAMES}
    m = {name: np.zeros_like(x) for name, x in w.items()}
    s = {name: np.zeros_like(x) for name, x in w.items()}
    losses = np.empty(config.steps)
    (b1, b2), lr = _BETAS, config.lr
    for t in range(1, config.steps + 1):
        batch = make_batch(_training_pairs(rng, config.batch_size, exclude), embedder)
        losses[t - 1], grads = loss_and_gradients(w, batch, n_heads=config.n_heads,
                                                  objective=config.objective)
        for name, g in grads.items():
            m[name] = b1 * m[name] + (1 - b1) * g
            s[name] = b2 * s[name] + (1 - b2) * g * g
            step = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)  # bias-corrected step size
            w[name] -= step * m[name] / (np.sqrt(s[name]) + _EPS)
        if callback is not None:
            callback(t, float(losses[t - 1]))
    model = MultiHeadCrossAttention(config.d_model, config.n_heads, seed=config.seed)
    for name in WEIGHT_NAMES:
        setattr(model, name, w[name])
    return TrainResult(config, model, untrained, embedder, losses, heldout)


# ----------------------------------------------------------------------------- evaluation
def _attention(model: MultiHeadCrossAttention, embedder: ToyEmbedder,
               pairs: Sequence[SentencePair]) -> tuple[Batch, np.ndarray]:
    """The batch of ``pairs`` and the model's weights on it, (B, n_heads, T, S)."""
    if not isinstance(model, MultiHeadCrossAttention):
        raise ValueError(f"model must be a MultiHeadCrossAttention; received "
                         f"{type(model).__name__}.")
    if embedder.d_model != model.d_model:
        raise ValueError(f"embedder.d_model must equal model.d_model={model.d_model}; "
                         f"received {embedder.d_model}. Use the TrainResult's embedder.")
    batch = make_batch(pairs, embedder)
    _, weights = model(batch.decoder_state, batch.encoder_output, batch.encoder_mask)
    return batch, weights


def _hits(batch: Batch, guess: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per target word (B, T): is ``guess`` the gold source word, and the gold position?"""
    gold_word = np.take_along_axis(batch.source_words, np.maximum(batch.gold, 0), axis=1)
    same_word = np.take_along_axis(batch.source_words, guess, axis=1) == gold_word
    return same_word, guess == batch.gold


def alignment_accuracy(model: MultiHeadCrossAttention, embedder: ToyEmbedder,
                       pairs: Sequence[SentencePair], *, exact: bool = False,
                       head: int | None = None) -> float:
    """Share of aligned target words whose strongest attention falls on their gold word.

    Parameters
    ----------
    model : MultiHeadCrossAttention
    embedder : ToyEmbedder
        The word vectors the model expects (``TrainResult.embedder``).
    pairs : sequence of SentencePair
        Target words with no gold alignment (None) are left out.
    exact : bool, default False
        False: the argmax may be any source word equal to the gold word (either "the" counts).
        True: it must be the gold position, which for a repeated word only position can tell.
    head : int, optional
        Score one head's weights instead of the head average.

    Returns
    -------
    float
        In [0, 1]; NaN if no target word has a gold alignment.
    """
    batch, weights = _attention(model, embedder, pairs)
    if head is not None and not (isinstance(head, (int, np.integer)) and
                                 0 <= head < model.n_heads):
        raise ValueError(f"head must be an int in [0, {model.n_heads - 1}]; received {head!r}.")
    attn = weights.mean(axis=1) if head is None else weights[:, head]        # (B, T, S)
    same_word, same_pos = _hits(batch, attn.argmax(axis=-1))
    rows = batch.gold >= 0
    return float((same_pos if exact else same_word)[rows].mean()) if rows.any() else math.nan


def chance_accuracy(pairs: Sequence[SentencePair], *, exact: bool = False) -> float:
    """Expected ``alignment_accuracy`` of an argmax drawn uniformly from the source words.

    A target word scores 1/n_src with ``exact=True``, and (occurrences of its gold word)/n_src
    otherwise; the result is the mean over aligned target words (NaN if there are none).
    """
    scores = [(1 if exact else p.source.count(p.source[j])) / len(p.source)
              for p in pairs for j in p.alignment if j is not None]
    return float(np.mean(scores)) if scores else math.nan


def alignment_by_head(model: MultiHeadCrossAttention, embedder: ToyEmbedder,
                      pairs: Sequence[SentencePair]) -> dict[str, np.ndarray]:
    """How well each head aligns, as a column table (one row per head).

    Measured on the aligned target words of ``pairs``; complements the gold-free measures of
    ``xattn.metrics.head_statistics`` (entropy, confidence, ...).

    Returns
    -------
    dict of str to ndarray of shape (n_heads,)
        ``"head"`` (0, 1, ...) and the keys of ``ALIGNMENT_MEASURES`` (described there). An
        entry is NaN when ``pairs`` hold no target word of its kind.
    """
    batch, weights = _attention(model, embedder, pairs)                      # (B, h, T, S)
    rows = batch.gold >= 0                                                    # (B, T)
    gold = np.maximum(batch.gold, 0)
    gold_word = np.take_along_axis(batch.source_words, gold, axis=1)          # (B, T)
    repeated = (batch.source_words[:, None, :] == gold_word[..., None]).sum(axis=-1) > 1
    moved = rows & (batch.gold != np.arange(batch.gold.shape[1]))
    mean = lambda x, where: float(x[where].mean()) if where.any() else math.nan
    stats: dict[str, list] = {"head": list(range(model.n_heads))}
    stats.update({k: [] for k in ALIGNMENT_MEASURES})
    for h in range(model.n_heads):
        attn = weights[:, h]                                                  # (B, T, S)
        same_word, same_pos = _hits(batch, attn.argmax(axis=-1))
        stats["word_accuracy"].append(mean(same_word, rows))
        stats["exact_accuracy"].append(mean(same_pos, rows))
        stats["moved_accuracy"].append(mean(same_word, moved))
        stats["repeated_accuracy"].append(mean(same_pos, rows & repeated))
        on_gold = np.take_along_axis(attn, gold[..., None], axis=-1)[..., 0]  # (B, T)
        stats["gold_weight"].append(mean(on_gold, rows))
    return {k: np.array(v) for k, v in stats.items()}

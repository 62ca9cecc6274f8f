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

**The time-lapse.** ``TrainConfig.snapshots`` times over a run (and at the start) the run
keeps every head's weights on a fixed probe pair and the held-out loss and accuracies
(``TrainResult.timelapse``, ``xattn.timelapse``); its cost in time and bytes is measured by
``python -m benchmarks.bench_train --timelapse``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from xattn._checks import check_int, check_seed
from xattn.attention import MultiHeadCrossAttention, masked_softmax, merge_heads, split_heads
from xattn.corpus import SOURCE_WORDS, SentencePair, generate_pairs
from xattn.embedder import ToyEmbedder, sinusoidal_positions
from xattn.timelapse import PROBE, Recorder, Timelapse, snapshot_steps

__all__ = ["OBJECTIVES", "WEIGHT_NAMES", "TrainConfig", "TrainResult", "Batch", "make_batch",
           "embed_pair", "loss_and_gradients", "train"]

OBJECTIVES = ("mse", "ce")
WEIGHT_NAMES = ("W_Q", "W_K", "W_V", "W_O")
_BETAS, _EPS = (0.9, 0.999), 1e-8   # Adam's usual constants
_TRAIN_STREAM, _HELDOUT_STREAM = 1, 2  # seeds of the two sentence streams: (config.seed, k)
MAX_SNAPSHOTS = 1000    # time-lapse frames per run, at most


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
    snapshots: int = 20     # time-lapse frames after the start (xattn.timelapse); 0: none

    def __post_init__(self) -> None:
        for name in ("d_model", "n_heads", "steps", "batch_size", "n_heldout"):
            check_int(getattr(self, name), name, minimum=1)
        check_int(self.snapshots, "snapshots", minimum=0, maximum=MAX_SNAPSHOTS)
        check_seed(self.seed)
        check_seed(self.embed_seed, "embed_seed")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model must be divisible by n_heads; received d_model="
                             f"{self.d_model}, n_heads={self.n_heads}.")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}; received "
                             f"{self.objective!r}.")
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)):
            raise TypeError(f"lr must be a number; received {type(self.lr).__name__} "
                            f"{self.lr!r}.")
        if not (math.isfinite(self.lr) and self.lr > 0):
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


def _embed_padded(sentences: Sequence[tuple[str, ...]], embedder: ToyEmbedder,
                  n: int) -> np.ndarray:
    """``embedder.embed`` of each sentence in rows of a zero (B, n, d_model) array: the same
    numbers, with one vector per distinct word and one positional table per length instead
    of one per sentence (a training step's batch 4x faster)."""
    out = np.zeros((len(sentences), n, embedder.d_model))                    # (B, n, d_model)
    vectors: dict[str, np.ndarray] = {}
    positions: dict[int, np.ndarray] = {}
    for b, words in enumerate(sentences):
        for i, word in enumerate(words):
            if word not in vectors:
                vectors[word] = embedder.token_vector(word)
            out[b, i] = vectors[word]
        if embedder.positional:
            if len(words) not in positions:
                positions[len(words)] = sinusoidal_positions(len(words), embedder.d_model)
            out[b, :len(words)] += positions[len(words)]
    return out


def make_batch(pairs: Sequence[SentencePair], embedder: ToyEmbedder) -> Batch:
    """Embed and pad ``pairs`` (a non-empty sequence of SentencePair) into one ``Batch``."""
    if not pairs or not all(isinstance(p, SentencePair) for p in pairs):
        raise ValueError("pairs must be a non-empty sequence of SentencePair; received "
                         f"{type(pairs).__name__} of length {len(pairs)}.")
    n_b = len(pairs)
    n_tgt, n_src = max(len(p.target) for p in pairs), max(len(p.source) for p in pairs)
    x_t = _embed_padded([p.target for p in pairs], embedder, n_tgt)          # (B, T, d_model)
    x_s = _embed_padded([p.source for p in pairs], embedder, n_src)          # (B, S, d_model)
    keep = np.zeros((n_b, n_src), dtype=bool)
    gold = np.full((n_b, n_tgt), -1)
    words = np.full((n_b, n_src), "", dtype=object)
    vocab = {w: k for k, w in enumerate(SOURCE_WORDS)}
    for b, p in enumerate(pairs):
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
    scale = 1.0 / math.sqrt(x_t.shape[-1] // n_heads)
    q = split_heads(x_t @ w["W_Q"], n_heads)                                  # (B, h, T, dh)
    k = split_heads(x_s @ w["W_K"], n_heads)                                  # (B, h, S, dh)
    v = split_heads(x_s @ w["W_V"], n_heads)                                  # (B, h, S, dh)
    scores = (q @ k.swapaxes(-1, -2)) * scale                                 # (B, h, T, S)
    a = masked_softmax(scores, batch.encoder_mask[:, None, None, :])          # (B, h, T, S)
    concat = merge_heads(a @ v)                                               # (B, T, d_model)
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


def _flat(x: np.ndarray) -> np.ndarray:
    """(B, rows, d) to (B * rows, d): every row of the batch, for the weight gradients."""
    return x.reshape(-1, x.shape[-1])


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
    g = {"W_O": _flat(f["concat"]).T @ _flat(d_y)}
    d_heads = split_heads(d_y @ weights["W_O"].T, n_heads)                   # (B, h, T, dh)
    a = f["a"]
    d_a = d_heads @ f["v"].transpose(0, 1, 3, 2)                              # (B, h, T, S)
    d_v = a.transpose(0, 1, 3, 2) @ d_heads                                   # (B, h, S, dh)
    d_s = a * (d_a - (d_a * a).sum(axis=-1, keepdims=True)) * f["scale"]      # softmax backward
    d_q = d_s @ f["k"]                                                        # (B, h, T, dh)
    d_k = d_s.transpose(0, 1, 3, 2) @ f["q"]                                  # (B, h, S, dh)
    g["W_Q"] = _flat(batch.decoder_state).T @ _flat(merge_heads(d_q))
    g["W_K"] = _flat(batch.encoder_output).T @ _flat(merge_heads(d_k))
    g["W_V"] = _flat(batch.encoder_output).T @ _flat(merge_heads(d_v))
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
    timelapse : Timelapse or None
        Snapshots over the run (``xattn.timelapse``); None when ``config.snapshots`` is 0.
    """

    config: TrainConfig
    model: MultiHeadCrossAttention
    untrained: MultiHeadCrossAttention
    embedder: ToyEmbedder
    losses: np.ndarray = field(repr=False)
    heldout: tuple[SentencePair, ...] = field(repr=False)
    timelapse: Timelapse | None = field(default=None, repr=False)


def _training_pairs(rng: np.random.Generator, n: int, exclude: set) -> list[SentencePair]:
    pairs: list[SentencePair] = []
    while len(pairs) < n:
        pairs += [p for p in generate_pairs(n - len(pairs), seed=rng) if p.source not in exclude]
    return pairs


def _objective(batch: Batch, objective: str) -> Callable[[np.ndarray], float]:
    """The loss of an output (B, T, d_model) on ``batch`` alone, as ``_loss_grad_output``
    computes it (the time-lapse's held-out loss); what does not change is computed once."""
    if objective != "mse":
        return lambda y: _loss_grad_output(y, batch, objective)[0]
    rows = (batch.gold >= 0)[..., None]                                       # (B, T, 1)
    target = np.take_along_axis(batch.encoder_output,
                                np.maximum(batch.gold, 0)[..., None], axis=1)  # (B, T, d)
    n = max(rows.sum(), 1) * batch.encoder_output.shape[-1]
    return lambda y: float((((y - target) * rows) ** 2).sum() / n)


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
    # the returned model from the start, its arrays updated in place: snapshots call it
    model = MultiHeadCrossAttention(config.d_model, config.n_heads, seed=config.seed)
    w = {name: getattr(model, name) for name in WEIGHT_NAMES}
    m = {name: np.zeros_like(x) for name, x in w.items()}
    s = {name: np.zeros_like(x) for name, x in w.items()}
    losses = np.empty(config.steps)
    recorder = None
    if config.snapshots:
        scored = make_batch(heldout, embedder)
        recorder = Recorder(snapshot_steps(config.steps, config.snapshots), scored,
                            embed_pair(PROBE, embedder), _objective(scored, config.objective))
        recorder.take(0, model)
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
        if recorder is not None:
            recorder.take(t, model)
        if callback is not None:
            callback(t, float(losses[t - 1]))
    return TrainResult(config, model, untrained, embedder, losses, heldout,
                       None if recorder is None else recorder.timelapse())

"""Training: gradient check, loss decrease, target accuracy, determinism, evaluation, errors,
and the time-lapse of snapshots over a run."""

from dataclasses import replace

import numpy as np
import pytest

from xattn import MultiHeadCrossAttention, ToyEmbedder
from xattn.alignment import (
    ALIGNMENT_MEASURES,
    alignment_accuracy,
    alignment_by_head,
    chance_accuracy,
    evaluate,
)
from xattn.corpus import align, generate_pairs, translate
from xattn.timelapse import HEAD_MEASURES, PROBE, Timelapse, head_scores, snapshot_steps
from xattn.train import (
    WEIGHT_NAMES,
    TrainConfig,
    _forward,
    _loss_grad_output,
    _training_pairs,
    embed_pair,
    loss_and_gradients,
    make_batch,
    train,
)


def _random_weights(d_model: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal((d_model, d_model)) * 0.5 for name in WEIGHT_NAMES}


@pytest.mark.parametrize("objective", ["mse", "ce"])
@pytest.mark.parametrize(("d_model", "n_heads"), [(8, 1), (12, 3), (16, 4)])
def test_gradients_match_finite_differences(objective, d_model, n_heads):
    # sentences of different lengths, so padding and masking are part of the check
    pairs = [translate("the red cat sees the dog"), translate("a queen sleeps"),
             translate("this sick boy finds a strange car")]
    batch = make_batch(pairs, ToyEmbedder(d_model, seed=1))
    w = _random_weights(d_model, seed=d_model)
    _, grads = loss_and_gradients(w, batch, n_heads=n_heads, objective=objective)
    eps = 1e-6
    for name in WEIGHT_NAMES:
        numeric = np.empty_like(w[name])
        for idx in np.ndindex(*w[name].shape):
            old = w[name][idx]
            w[name][idx] = old + eps
            up, _ = loss_and_gradients(w, batch, n_heads=n_heads, objective=objective)
            w[name][idx] = old - eps
            down, _ = loss_and_gradients(w, batch, n_heads=n_heads, objective=objective)
            w[name][idx] = old
            numeric[idx] = (up - down) / (2 * eps)
        rel = np.linalg.norm(grads[name] - numeric) / np.linalg.norm(numeric)
        assert rel < 1e-6, (name, rel)


def test_forward_matches_the_module_so_trained_weights_mean_the_same(trained):
    pairs = generate_pairs(5, seed=11)
    batch = make_batch(pairs, trained.embedder)
    w = {name: getattr(trained.model, name) for name in WEIGHT_NAMES}
    ours = _forward(w, batch, trained.model.n_heads)
    out, weights = trained.model(batch.decoder_state, batch.encoder_output, batch.encoder_mask)
    np.testing.assert_allclose(ours["a"], weights, atol=1e-12)
    np.testing.assert_allclose(ours["y"], out, atol=1e-10)


def test_padding_does_not_change_the_loss():
    emb = ToyEmbedder(8, seed=0)
    long, short = translate("the red cat sees the pink dog"), translate("a cow runs")
    w = _random_weights(8, seed=3)
    for objective in ("mse", "ce"):
        both, _ = loss_and_gradients(w, make_batch([long, short], emb), n_heads=2,
                                     objective=objective)
        parts = [loss_and_gradients(w, make_batch([p], emb), n_heads=2, objective=objective)[0]
                 for p in (long, short)]
        np.testing.assert_allclose(both, (7 * parts[0] + 3 * parts[1]) / 10)


def test_make_batch_shapes_padding_and_rows():
    emb = ToyEmbedder(8, seed=0)
    pairs = [translate("the red cat sees the dog"), translate("a queen sleeps")]
    b = make_batch(pairs, emb)
    assert b.decoder_state.shape == (2, 6, 8) and b.encoder_output.shape == (2, 6, 8)
    assert b.encoder_mask.tolist() == [[True] * 6, [True] * 3 + [False] * 3]
    assert b.gold.tolist() == [[0, 2, 1, 3, 4, 5], [0, 1, 2, -1, -1, -1]]
    assert b.source_words[1].tolist() == ["a", "queen", "sleeps", "", "", ""]
    x_t, x_s = embed_pair(pairs[1], emb)
    np.testing.assert_array_equal(b.decoder_state[1, :3], x_t)
    np.testing.assert_array_equal(b.encoder_output[1, :3], x_s)
    assert not b.decoder_state[1, 3:].any() and not b.encoder_output[1, 3:].any()
    assert b.readout.shape == (39, 8)


@pytest.mark.parametrize("embedder", [ToyEmbedder(12, seed=3), ToyEmbedder(7, seed=1),
                                      ToyEmbedder(8, positional=False),
                                      ToyEmbedder(10, mode="ngram")])
def test_make_batch_embeds_every_pair_exactly_as_embed_pair(embedder):
    pairs = generate_pairs(40, seed=9) + [align("the dog sleeps", "le chien rouge dort")]
    b = make_batch(pairs, embedder)
    for k, p in enumerate(pairs):
        x_t, x_s = embed_pair(p, embedder)
        np.testing.assert_array_equal(b.decoder_state[k, :len(p.target)], x_t)
        np.testing.assert_array_equal(b.encoder_output[k, :len(p.source)], x_s)
        assert not b.decoder_state[k, len(p.target):].any()
        assert not b.encoder_output[k, len(p.source):].any()


def test_loss_decreases(trained):
    losses = trained.losses
    assert losses.shape == (100,) and np.isfinite(losses).all()
    assert losses[-10:].mean() < 0.1 * losses[:10].mean()


def test_trained_model_beats_target_on_held_out_sentences(trained):
    heldout = trained.heldout
    assert len(heldout) == 256
    assert alignment_accuracy(trained.model, trained.embedder, heldout) >= 0.9
    assert alignment_accuracy(trained.model, trained.embedder, heldout, exact=True) >= 0.9


def test_untrained_model_is_near_chance(trained):
    heldout = trained.heldout
    for exact in (False, True):
        random = alignment_accuracy(trained.untrained, trained.embedder, heldout, exact=exact)
        assert abs(random - chance_accuracy(heldout, exact=exact)) < 0.1


def test_trained_heads_specialise(trained):
    stats = alignment_by_head(trained.model, trained.embedder, trained.heldout)
    assert stats["head"].tolist() == [0, 1, 2, 3]
    assert set(stats) == {"head", *ALIGNMENT_MEASURES}
    # one head follows meaning through the noun-adjective swap; another does not and
    # leans on position (it still tells most repeated words apart)
    assert stats["moved_accuracy"].max() > 0.95
    weakest = stats["moved_accuracy"].argmin()
    assert stats["moved_accuracy"][weakest] < 0.6
    assert stats["repeated_accuracy"][weakest] > 0.7


def test_untrained_and_trained_models_are_modules_with_the_seeded_start(trained):
    fresh = MultiHeadCrossAttention(32, 4, seed=0)
    assert isinstance(trained.model, MultiHeadCrossAttention)
    for name in WEIGHT_NAMES:
        np.testing.assert_array_equal(getattr(trained.untrained, name), getattr(fresh, name))
        assert not np.allclose(getattr(trained.model, name), getattr(fresh, name))


def test_training_is_reproducible_and_reports_progress():
    config = TrainConfig(steps=4, batch_size=8, n_heldout=16, seed=3)
    seen = []
    a = train(config, callback=lambda step, loss: seen.append((step, loss)))
    b = train(config)
    assert [s for s, _ in seen] == [1, 2, 3, 4]
    np.testing.assert_array_equal([loss for _, loss in seen], a.losses)
    np.testing.assert_array_equal(a.losses, b.losses)
    for name in WEIGHT_NAMES:
        np.testing.assert_array_equal(getattr(a.model, name), getattr(b.model, name))
    assert a.heldout == b.heldout
    c = train(TrainConfig(steps=4, batch_size=8, n_heldout=16, seed=4))
    assert not np.array_equal(a.losses, c.losses)


def test_cross_entropy_objective_trains():
    result = train(TrainConfig(objective="ce", steps=30))
    assert result.losses[-5:].mean() < 0.5 * result.losses[:5].mean()


def test_training_never_draws_held_out_sentences():
    exclude = {p.source for p in generate_pairs(40, seed=np.random.default_rng(7))[:20]}
    pairs = _training_pairs(np.random.default_rng(7), 40, exclude)
    assert len(pairs) == 40 and not {p.source for p in pairs} & exclude


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    (dict(d_model=0), ValueError, "d_model must be an int >= 1; received 0"),
    (dict(steps=2.5), TypeError, "steps must be an int; received float 2.5"),
    (dict(batch_size=True), TypeError, "batch_size must be an int; received bool True"),
    (dict(d_model=30, n_heads=4), ValueError,
     "divisible by n_heads; received d_model=30, n_heads=4"),
    (dict(objective="l1"), ValueError,
     "objective must be one of \\('mse', 'ce'\\); received 'l1'"),
    (dict(lr=0), ValueError, "lr must be a finite number > 0; received 0"),
    (dict(lr=float("nan")), ValueError, "lr must be a finite number > 0; received nan"),
    (dict(lr="0.1"), TypeError, "lr must be a number; received str '0.1'"),
    (dict(seed=True), TypeError, "seed must be an int; received bool True"),
    (dict(seed=None), TypeError, "seed must be an int .* received None"),
    (dict(seed=-1), ValueError, "seed must be an int >= 0 and <= 9223372036854775807"),
])
def test_config_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        TrainConfig(**kwargs)


def test_public_function_errors():
    emb = ToyEmbedder(8, seed=0)
    pairs = [translate("the cat runs")]
    with pytest.raises(ValueError, match="config must be a TrainConfig; received dict"):
        train({"steps": 3})
    with pytest.raises(ValueError, match="pairs must be a non-empty sequence of SentencePair"):
        make_batch([], emb)
    with pytest.raises(ValueError, match="objective must be one of"):
        loss_and_gradients(_random_weights(8, 0), make_batch(pairs, emb), n_heads=2,
                           objective="hinge")



# ---------------------------------------------------------------- the time-lapse
def _timelapse_digest(timelapse) -> str:
    """sha256 of every array of a Timelapse, in a fixed order."""
    import hashlib

    h = hashlib.sha256()
    for a in (timelapse.steps, timelapse.weights, timelapse.loss, timelapse.word_accuracy,
              timelapse.exact_accuracy, *(timelapse.by_head[k] for k in HEAD_MEASURES)):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def test_timelapse_frames_shapes_and_probe(trained):
    tl = trained.timelapse
    assert tl.steps.tolist() == list(range(0, 101, 5))              # the start and 20 frames
    assert tl.probe == PROBE and " ".join(PROBE.target) == "le chat rouge voit le chien"
    assert tl.weights.shape == (21, 4, 6, 6) and tl.loss.shape == (21,)
    assert tl.word_accuracy.shape == tl.exact_accuracy.shape == (21,)
    assert set(tl.by_head) == set(HEAD_MEASURES) == set(ALIGNMENT_MEASURES)
    assert all(v.shape == (21, 4) for v in tl.by_head.values())
    np.testing.assert_allclose(tl.weights.sum(axis=-1), 1.0)
    assert tl.n_heldout == 256


def test_last_snapshot_equals_the_trained_model_and_first_the_untrained(trained):
    tl, emb, heldout = trained.timelapse, trained.embedder, trained.heldout
    x_t, x_s = embed_pair(PROBE, emb)
    np.testing.assert_array_equal(tl.weights[-1], trained.model(x_t, x_s)[1])
    np.testing.assert_array_equal(tl.weights[0], trained.untrained(x_t, x_s)[1])
    for frame, model in ((-1, trained.model), (0, trained.untrained)):
        by_head = alignment_by_head(model, emb, heldout)
        for k in HEAD_MEASURES:
            np.testing.assert_array_equal(tl.by_head[k][frame], by_head[k])
        assert tl.word_accuracy[frame] == alignment_accuracy(model, emb, heldout)
        assert tl.exact_accuracy[frame] == alignment_accuracy(model, emb, heldout, exact=True)
        batch = make_batch(heldout, emb)
        y, _ = model(batch.decoder_state, batch.encoder_output, batch.encoder_mask)
        assert tl.loss[frame] == _loss_grad_output(y, batch, "mse")[0]


@pytest.mark.parametrize("n_heads", [1, 8])
def test_last_frame_scores_equal_alignment_by_head_for_other_head_counts(n_heads):
    # 256 held-out sentences x 8 heads: the frames score them 64 at a time
    result = train(TrainConfig(n_heads=n_heads, steps=8, batch_size=8))
    by_head = alignment_by_head(result.model, result.embedder, result.heldout)
    for k in HEAD_MEASURES:
        np.testing.assert_array_equal(result.timelapse.by_head[k][-1], by_head[k])
    assert result.timelapse.weights.shape == (9, n_heads, 6, 6)


def test_timelapse_shows_learning_and_when_each_head_starts(trained):
    tl = trained.timelapse
    assert tl.word_accuracy[0] < 0.3 and tl.word_accuracy[-1] > 0.95
    assert tl.loss[-1] < 0.05 * tl.loss[0]
    onset = tl.onset(0.5)
    assert onset.shape == (4,) and (onset > 0).all() and (onset <= 100).all()
    for h in range(4):                                  # the onset is the first frame at 50%
        reached = tl.by_head["word_accuracy"][:, h] >= 0.5
        assert tl.steps[reached.argmax()] == onset[h] and not reached[:reached.argmax()].any()
    assert (tl.onset(1.0, "moved_accuracy") == -1).sum() >= 1    # some head never gets there


def test_onset_on_a_hand_made_timelapse():
    by_head = {k: np.array([[0.1, 0.2], [0.6, 0.3], [0.9, 0.4]]) for k in HEAD_MEASURES}
    tl = Timelapse(np.array([0, 10, 20]), PROBE, np.zeros((3, 2, 6, 6)), np.zeros(3),
                   np.zeros(3), np.zeros(3), by_head, 5)
    assert tl.onset(0.5).tolist() == [10, -1] and tl.onset(0.1).tolist() == [0, 0]
    with pytest.raises(ValueError, match="measure must be one of .* received 'loss'"):
        tl.onset(0.5, "loss")
    with pytest.raises(ValueError, match="level must be a number in \\[0, 1\\]; received True"):
        tl.onset(True)


@pytest.mark.parametrize(("steps", "n", "expected"), [
    (100, 20, tuple(range(0, 101, 5))), (25, 20, (0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 15,
                                                  16, 17, 18, 20, 21, 22, 23, 25)),
    (3, 20, (0, 1, 2, 3)), (7, 1, (0, 7)), (50, 0, ()),
])
def test_snapshot_steps(steps, n, expected):
    assert snapshot_steps(steps, n) == expected


def test_snapshots_zero_keeps_no_timelapse_and_changes_nothing_else():
    config = TrainConfig(steps=6, batch_size=8, n_heldout=16, seed=2)
    with_frames = train(config)
    without = train(TrainConfig(steps=6, batch_size=8, n_heldout=16, seed=2, snapshots=0))
    assert without.timelapse is None and with_frames.timelapse.steps.tolist() == list(range(7))
    np.testing.assert_array_equal(with_frames.losses, without.losses)
    for name in WEIGHT_NAMES:
        np.testing.assert_array_equal(getattr(with_frames.model, name),
                                      getattr(without.model, name))


@pytest.mark.parametrize("n_heads", [1, 4])
def test_evaluate_reuses_the_frames_and_gives_the_numbers_it_computes_without_them(n_heads):
    # a run with a time-lapse is scored from its first and last frames: the page's table of
    # trained/untrained/chance accuracies and every head's measures must be the same numbers
    kwargs = dict(n_heads=n_heads, steps=12, batch_size=8, n_heldout=64, seed=3)
    framed = evaluate(train(TrainConfig(**kwargs)), 1.0)
    bare = evaluate(train(TrainConfig(**kwargs, snapshots=0)), 1.0)
    assert framed.accuracy == bare.accuracy
    assert framed.by_head.keys() == bare.by_head.keys() == {"trained", "untrained"}
    for name in ("trained", "untrained"):
        assert framed.by_head[name].keys() == bare.by_head[name].keys()
        for k, v in bare.by_head[name].items():
            np.testing.assert_array_equal(framed.by_head[name][k], v)
            assert framed.by_head[name][k].dtype == v.dtype
    assert framed.by_head["trained"]["word_accuracy"].tolist() \
        != framed.by_head["untrained"]["word_accuracy"].tolist()


def test_head_scores_equal_alignment_by_head_with_unaligned_words():
    pairs = [align("the dog sleeps", "le chien rouge dort"), translate("the red cat sees the dog"),
             align("a cow runs", "une vache court vite")]
    model, emb = MultiHeadCrossAttention(16, 4, seed=5), ToyEmbedder(16, seed=1)
    batch = make_batch(pairs, emb)
    _, weights = model(batch.decoder_state, batch.encoder_output, batch.encoder_mask)
    ours = head_scores(weights, batch.gold, batch.source_words)
    theirs = alignment_by_head(model, emb, pairs)
    for k in HEAD_MEASURES:
        np.testing.assert_array_equal(ours[k], theirs[k])


def test_timelapse_is_identical_in_another_process(trained):
    import os
    import subprocess
    import sys

    code = ("from tests.test_train import _timelapse_digest; from xattn.train import train; "
            "print(_timelapse_digest(train().timelapse))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.stdout.strip() == _timelapse_digest(trained.timelapse)


def test_timelapse_stays_small_at_the_largest_page_setting():
    import pickle

    config = TrainConfig(n_heads=8, steps=400, batch_size=2, n_heldout=16)   # 8 heads, 400 steps
    result = train(config)
    assert result.timelapse.weights.shape == (21, 8, 6, 6)
    added = len(pickle.dumps(result)) - len(pickle.dumps(replace(result, timelapse=None)))
    assert 0 < added < 100_000                       # far below the 2 MB budget


def test_snapshots_config_errors():
    with pytest.raises(TypeError, match="snapshots must be an int; received bool True"):
        TrainConfig(snapshots=True)
    with pytest.raises(ValueError, match="snapshots must be an int >= 0 and <= 1000; received -1"):
        TrainConfig(snapshots=-1)

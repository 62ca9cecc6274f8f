"""Training: gradient check, loss decrease, target accuracy, determinism, evaluation, errors."""


import numpy as np
import pytest

from xattn import MultiHeadCrossAttention, ToyEmbedder
from xattn.alignment import (
    ALIGNMENT_MEASURES,
    alignment_accuracy,
    alignment_by_head,
    chance_accuracy,
)
from xattn.corpus import generate_pairs, translate
from xattn.train import (
    WEIGHT_NAMES,
    TrainConfig,
    _forward,
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


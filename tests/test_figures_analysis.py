"""Figures of the analysis views: head statistics and ablation."""

import numpy as np

from xattn.ablation import ablation
from xattn.figures import ablation_figure, measure_figure
from xattn.metrics import head_statistics
from xattn.pipeline import Settings, run


def test_statistics_and_ablation_figures():
    r = run(Settings())
    stats = head_statistics(r.weights, r.mask)
    fig = measure_figure(stats, "confidence", "confidence")
    assert len(fig.data) == 1 and list(fig.data[0].x) == [f"head {h}" for h in range(1, 5)]
    np.testing.assert_allclose(fig.data[0].y, stats["confidence"])
    assert fig.layout.title.text == "confidence"
    res = ablation(r.module(), r.decoder_state, r.encoder_output, r.mask, heads_off=(0, 2))
    fig = ablation_figure(res, r.tgt_tokens, [1, 3])
    np.testing.assert_allclose(fig.data[0].y, res.per_token)
    assert "heads 1, 3 off" in fig.layout.title.text

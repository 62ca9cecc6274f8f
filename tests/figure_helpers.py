"""A small awkward case shared by the figure tests: markup-like, repeated and unequal tokens."""

import numpy as np

SRC = ["<s>", "the", "cat", "&", "the", "</s>"]
TGT = ["le", "<b>", "chat"]


def toy_weights() -> np.ndarray:
    """Weights of shape (3 heads, 3 target, 6 source) whose rows sum to 1."""
    w = np.random.default_rng(0).random((3, len(TGT), len(SRC)))
    return w / w.sum(-1, keepdims=True)

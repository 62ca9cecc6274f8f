"""Storage dtypes of a model's weights: float32, float16 and bfloat16, computed in float32.

NumPy has float16 (a matmul with a float16 operand reads it as float32) but no bfloat16, the
top half of a float32. A bfloat16 array is kept as its 16-bit patterns under the dtype
``BFLOAT16`` (a one-field record, so that it is never taken for integers) and widened to float32
where it is used: a row block at a time for the largest matrices, never the whole model.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["BFLOAT16", "STORED", "all_finite", "to_float32"]

BFLOAT16 = np.dtype([("bfloat16", "<u2")])
STORED = (np.dtype(np.float32), np.dtype(np.float16), BFLOAT16)   # kept as they are
_ROWS = 4096      # rows checked at a time: a bounded temporary, whatever the matrix


def to_float32(a: np.ndarray) -> np.ndarray:
    """``a`` as float32: itself when it is float32, else a float32 copy (bfloat16: its bits
    shifted into the top half of a float32, which is exact).

    Examples
    --------
    >>> bits = np.array([[0x3F80, 0xC000]], np.uint16).view(BFLOAT16)
    >>> to_float32(bits).tolist()
    [[1.0, -2.0]]
    """
    if a.dtype == np.float32:
        return a
    if a.dtype == BFLOAT16:
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def all_finite(a: np.ndarray) -> bool:
    """Whether every number of ``a`` is finite, with no temporary of ``a``'s size (a float64
    sum over float32; row blocks for 16-bit storage)."""
    if a.size == 0:
        return True
    if a.dtype == np.float32 or a.dtype == np.float64:
        total = np.add.reduce(a, axis=None, dtype=np.float64)
        return math.isfinite(total) or bool(np.isfinite(a).all())
    blocks = (a[r:r + _ROWS] for r in range(0, len(a), _ROWS)) if a.ndim else (a,)
    for block in blocks:                     # slices of the array itself: views, no copy
        if a.dtype == BFLOAT16:   # exponent bits all ones: infinity or NaN
            if ((block.view(np.uint16) & 0x7F80) == 0x7F80).any():
                return False
        elif not np.isfinite(block).all():
            return False
    return True

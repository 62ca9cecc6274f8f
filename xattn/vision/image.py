"""An image as the encoder reads it, and each encoder position as a box of the image.

``preprocess`` equals transformers' ``ViTImageProcessor`` with its PIL backend (the one TrOCR's
processor uses where torchvision is not installed, ``ViTImageProcessorPil``): resize with
PIL's bilinear filter, rescale by 1/255, normalise by mean and std, channels first. The resize
is PIL's algorithm in NumPy: a filter widened by the scale when shrinking (antialiasing),
weights in fixed point (22 bits), a horizontal pass then a vertical one, each rounded to 8
bits; equal to the bit where only one side changes or PIL takes columns first, else within one
8-bit level (``resize_bilinear``). No PIL is needed to run it.

``patch_boxes`` maps encoder position ``j`` to the pixels of the *original* image its patch
was resized from, so a cross-attention row can be drawn over the picture the user gave.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import quote
from xattn.encdec.files import read_json

__all__ = ["ImageProcessing", "read_processing", "resize_bilinear", "preprocess", "patch_boxes",
           "MAX_PIXELS"]

MAX_PIXELS = 4096 * 4096        # an image larger than this is refused before any work
_BITS = 22                      # PIL's PRECISION_BITS for 8-bit images (32 - 8 - 2)
_BILINEAR = 2                   # PIL.Image.Resampling.BILINEAR, as preprocessor_config.json says


@dataclass(frozen=True)
class ImageProcessing:
    """What ``preprocessor_config.json`` asks (ViTImageProcessor's fields and defaults)."""

    size: tuple[int, int] = (224, 224)          # (height, width)
    do_resize: bool = True
    do_rescale: bool = True
    rescale_factor: float = 1 / 255
    do_normalize: bool = True
    image_mean: tuple[float, ...] = (0.5, 0.5, 0.5)
    image_std: tuple[float, ...] = (0.5, 0.5, 0.5)


def read_processing(path) -> ImageProcessing:
    """``preprocessor_config.json``, checked: bilinear resizing only, no crop or padding."""
    raw = read_json(path, 1 << 16)
    size = raw.get("size", {"height": 224, "width": 224})
    if isinstance(size, int) and not isinstance(size, bool):
        size = {"height": size, "width": size}
    if not (isinstance(size, dict) and all(isinstance(size.get(k), int) and size[k] > 0
                                           for k in ("height", "width"))):
        raise ValueError(f"preprocessor_config.json: size must be a number or {{height, "
                         f"width}}; received {quote(size)}.")
    if raw.get("resample", _BILINEAR) != _BILINEAR:
        raise ValueError(f"preprocessor_config.json: resample {quote(raw.get('resample'))} is "
                         f"not bilinear ({_BILINEAR}), the only filter implemented here.")
    for key in ("do_center_crop", "do_pad"):
        if raw.get(key):
            raise ValueError(f"preprocessor_config.json asks {key}, which is not implemented "
                             f"here (TrOCR's processors resize only).")
    mean, std = raw.get("image_mean", [0.5] * 3), raw.get("image_std", [0.5] * 3)
    for name, v in (("image_mean", mean), ("image_std", std)):
        if not (isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v)):
            raise ValueError(f"preprocessor_config.json: {name} must be a list of numbers; "
                             f"received {quote(v)}.")
    return ImageProcessing((size["height"], size["width"]), bool(raw.get("do_resize", True)),
                           bool(raw.get("do_rescale", True)),
                           float(raw.get("rescale_factor", 1 / 255)),
                           bool(raw.get("do_normalize", True)), tuple(map(float, mean)),
                           tuple(map(float, std)))


def _coefficients(n_in: int, n_out: int) -> np.ndarray:
    """PIL's bilinear weights (``precompute_coeffs`` + ``normalize_coeffs_8bpc``) as a dense
    fixed-point matrix (n_out, n_in) of int64."""
    scale = n_in / n_out
    filterscale = max(scale, 1.0)
    support = filterscale                                   # bilinear's support is 1
    out = np.zeros((n_out, n_in), dtype=np.int64)
    for xx in range(n_out):
        center = (xx + 0.5) * scale
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        x = np.arange(lo, hi)
        w = np.maximum(1.0 - np.abs((x - center + 0.5) / filterscale), 0.0)   # (hi - lo,)
        if w.sum() != 0.0:
            w = w / w.sum()
        fixed = np.where(w < 0, -0.5 + w * (1 << _BITS), 0.5 + w * (1 << _BITS))
        out[xx, lo:hi] = np.trunc(fixed).astype(np.int64)
    return out


def _pass(image: np.ndarray, k: np.ndarray, axis: int) -> np.ndarray:
    """One pass along ``axis`` (0: rows, 1: columns) of a (H, W, C) uint8 image, rounded and
    clipped to uint8 as PIL's ``clip8``."""
    x = np.moveaxis(image.astype(np.int64), axis, 0)                    # (n_in, ..., C)
    acc = np.tensordot(k, x, axes=(1, 0)) + (1 << (_BITS - 1))           # (n_out, ..., C)
    return np.moveaxis(np.clip(acc >> _BITS, 0, 255).astype(np.uint8), 0, axis)


def resize_bilinear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """``PIL.Image.resize((width, height), BILINEAR)`` of a (H, W, C) uint8 image: to the bit
    when one side changes, else within one level where Pillow 13 chose rows first."""
    h, w = image.shape[:2]
    # Columns first, then rows, as Pillow's Resample.c up to 12. Pillow 13 sometimes takes
    # rows first when it shrinks them (a rule it does not document); the 8-bit rounding
    # between the passes then differs by one level in some pixels.
    for axis in (1, 0):
        n_in, n_out = image.shape[axis], (height, width)[axis]
        if n_in != n_out:
            image = _pass(image, _coefficients(n_in, n_out), axis)
    return image


def _as_rgb(image) -> np.ndarray:
    """A (H, W) or (H, W, 1|3|4) uint8 array as (H, W, 3): grey repeated, alpha dropped (as
    PIL's ``convert("RGB")``)."""
    a = np.asarray(image)
    if a.dtype != np.uint8:
        raise ValueError(f"image must be uint8 pixels (0-255); received dtype {a.dtype}. "
                         f"Decode the file first (e.g. PIL.Image.open(f).convert('RGB')).")
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3 or a.shape[2] not in (1, 3, 4) or 0 in a.shape:
        raise ValueError(f"image must have shape (height, width) or (height, width, 1|3|4); "
                         f"received shape {a.shape}.")
    if a.shape[0] * a.shape[1] > MAX_PIXELS:
        raise ValueError(f"image has {a.shape[0] * a.shape[1]:,} pixels; at most "
                         f"{MAX_PIXELS:,} are read.")
    if a.shape[2] == 1:
        return np.repeat(a, 3, axis=2)
    return a[:, :, :3]


def preprocess(image, processing: ImageProcessing = ImageProcessing()) -> np.ndarray:
    """``pixel_values`` of one image, as ``ViTImageProcessorPil`` makes them.

    Parameters
    ----------
    image : array_like of uint8, shape (H, W), (H, W, 1), (H, W, 3) or (H, W, 4)
    processing : ImageProcessing

    Returns
    -------
    ndarray of float32, shape (3, height, width)
    """
    a = _as_rgb(image)
    if processing.do_resize:
        a = resize_bilinear(a, *processing.size)                       # (h, w, 3) uint8
    x = a.astype(np.float32)
    if processing.do_rescale:
        x = x * np.float32(processing.rescale_factor)
    if processing.do_normalize:
        x = (x - np.asarray(processing.image_mean, np.float32)) / np.asarray(
            processing.image_std, np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1))                  # (3, h, w)


def patch_boxes(image_shape, grid: tuple[int, int], n_special: int = 1, *,
                covered: tuple[float, float] = (1.0, 1.0)) -> list:
    """Each encoder position's box in the original image: ``(x0, y0, x1, y1)`` in pixels
    (x1, y1 exclusive, as floats: the resize maps a patch to a fraction of a pixel), or
    ``None`` for the tokens before the patches (CLS; DeiT's distillation token).

    Parameters
    ----------
    image_shape : tuple
        The original image's (height, width, ...).
    grid : (rows, columns)
        The encoder's patch grid (``ImageEncoderConfig.grid``); patches are numbered row by
        row, as the patch embedding flattens them.
    n_special : int
        Tokens before the patches.
    covered : (float, float)
        The share of the resized image's height and width the grid covers (below 1 where
        the image size is not a multiple of the patch: the conv leaves the rest out).

    Examples
    --------
    >>> patch_boxes((20, 40), (2, 2))[1:3]
    [(0.0, 0.0, 20.0, 10.0), (20.0, 0.0, 40.0, 10.0)]
    """
    h, w = image_shape[0] * covered[0], image_shape[1] * covered[1]
    rows, cols = grid
    boxes: list = [None] * n_special
    for r in range(rows):
        for c in range(cols):
            boxes.append((c * w / cols, r * h / rows, (c + 1) * w / cols, (r + 1) * h / rows))
    return boxes

"""The NumPy models for a page: load by name, and one layer of a pair's pass opened up.

The pipeline from text to attention is ``xattn.translator.cross_attention`` (one for every
back end, re-exported here); what is the NumPy back end's own: loading a folder from the
deployer's allow-list, the teacher-forced pass behind a ``ModelAttention``, and its layers'
own ``MultiHeadCrossAttention`` (no torch, no hooks).
"""

from __future__ import annotations

from pathlib import Path

from xattn._checks import quote
from xattn.ablation import AblationResult
from xattn.attention import AttentionTrace
from xattn.encdec.config import read_config
from xattn.encdec.files import present
from xattn.encdec.model import EncoderDecoder, ForwardPass
from xattn.translator import (
    MODELS_ENV,
    ModelAttention,
    check_allowed,
    cross_attention,
    translate,
    word_level,
)

__all__ = ["SHIPPED_MODEL", "SHIPPED_FOLDER", "load_encdec", "runs_here", "cross_attention",
           "layer_trace", "layer_ablation", "translate", "teacher_forced", "word_level"]

SHIPPED_MODEL = "toy-en-fr"
SHIPPED_FOLDER = Path(__file__).resolve().parent / SHIPPED_MODEL


def runs_here(name: str) -> bool:
    """Whether ``name`` is a model this back end reads as it is: the shipped one, or a folder
    with safetensors weights and a ``config.json`` of a family it runs (or one that cannot be
    read: the refusal is this back end's to say, not a download's)."""
    folder = Path(name)
    if name == SHIPPED_MODEL:
        return True
    if not present(folder / "config.json") or not any(
            present(folder / f) for f in ("model.safetensors", "model.safetensors.index.json")):
        return False
    try:
        read_config(folder / "config.json")
    except ValueError as err:
        return "model_type must be one of" not in str(err)
    return True


def load_encdec(name: str = SHIPPED_MODEL, *, allowed=None,
                dtype: str = "float32") -> EncoderDecoder:
    """The shipped model, or a model folder on the deployer's allow-list.

    Parameters
    ----------
    name : str, default SHIPPED_MODEL
        ``"toy-en-fr"`` (in the base install, always allowed), or a folder that is in
        ``allowed``: a Hugging Face folder as downloaded (Marian, BART, mBART, M2M100, NLLB,
        T5: ``config.json``, ``model.safetensors`` and the tokenizer's files), a
        ``save_pretrained`` folder, or one written by ``python -m xattn.torch_models convert``.
    allowed : iterable of str, optional
        Defaults to ``xattn.translator.allowed_models()`` (env ``XATTN_MODELS``).
    dtype : {"float32", "float16"}, default "float32"
        Storage of the matrices; float16 halves the memory, computation stays float32.

    Raises
    ------
    ValueError
        A name off the list, not a folder, or a folder that is not a Marian model (missing or
        misshapen tensor, pickle-only weights, ...), each said in one message.
    """
    check_allowed(name, allowed, always=(SHIPPED_MODEL,))
    if name == SHIPPED_MODEL:
        return EncoderDecoder.from_folder(SHIPPED_FOLDER, dtype=dtype, name=name)
    if not Path(name).is_dir():
        raise ValueError(f"{name[:80]!r} is not a folder here; the NumPy models read a model's "
                         f"folder (e.g. huggingface-cli download {name[:80]} --local-dir DIR, "
                         f"then list DIR in {MODELS_ENV}), or where torch is installed: python "
                         f"-m xattn.torch_models convert {name[:80]} DIR.")
    return EncoderDecoder.from_folder(name, dtype=dtype, name=name)


def teacher_forced(model: EncoderDecoder, attention, *, head_mask=None) -> ForwardPass:
    """The teacher-forced pass behind ``attention`` (a ``ModelAttention`` or ``(src_ids,
    tgt_ids)``), piece level, without logits."""
    if isinstance(attention, ModelAttention):
        src_ids, tgt_ids = attention.src_ids, attention.tgt_ids
    else:
        try:
            src_ids, tgt_ids = attention
        except (TypeError, ValueError):
            raise TypeError(f"attention must be a ModelAttention or a pair (src_ids, tgt_ids); "
                            f"received {type(attention).__name__} {quote(attention)}.") from None
    return model.forward(src_ids, tgt_ids, head_mask=head_mask, logits=False)


def layer_trace(model: EncoderDecoder, attention, layer: int, *,
                scale: bool = True) -> AttentionTrace:
    """Every intermediate of decoder layer ``layer``'s cross-attention, at piece level: the
    layer's own ``MultiHeadCrossAttention.trace`` (``q = x W_Q + b_Q``, ...), so its weights
    equal the model's; ``scale=False`` leaves out 1/sqrt(d_head)."""
    return model.layer_trace(teacher_forced(model, attention), layer, scale=scale)


def layer_ablation(model: EncoderDecoder, attention, layer: int, heads_off=()) -> AblationResult:
    """Head importance in decoder layer ``layer``'s cross-attention (as
    ``xattn.torch_models.layer_ablation``): heads gated before ``out_proj`` of the real layer."""
    return model.layer_ablation(teacher_forced(model, attention), layer, heads_off)

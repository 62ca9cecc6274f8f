"""Inside one decoder layer's cross-attention: every intermediate, and heads switched off.

Forward hooks on the layer's ``encoder_attn`` (Marian, BART, mBART, Pegasus: modules with
``q_proj``, ``k_proj``, ``v_proj`` and ``out_proj``) record what the real model computes; nothing
is recomputed from copied weights except the scores ``q k^T``, which the model forms inside its
attention function. torch is imported inside the functions only.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from xattn._checks import check_int
from xattn.ablation import AblationResult, ablation
from xattn.attention import AttentionTrace
from xattn.torch_models._attention import teacher_forced
from xattn.translator import ModelAttention

__all__ = ["layer_trace", "layer_ablation"]


def _cross_module(loaded, layer):
    if not hasattr(loaded, "model") or not hasattr(loaded.model, "get_decoder"):
        raise TypeError("loaded must be a transformers model loaded by "
                        f"xattn.torch_models.load_model; received {type(loaded).__name__}.")
    n_layers = loaded.n_layers
    layer = check_int(layer, "layer", minimum=0, maximum=n_layers - 1)
    layers = getattr(loaded.model.get_decoder(), "layers", None)
    attn = getattr(layers[int(layer)], "encoder_attn", None) if layers is not None else None
    parts = ("q_proj", "k_proj", "v_proj", "out_proj", "num_heads", "head_dim")
    if attn is None or not all(hasattr(attn, p) for p in parts):
        raise ValueError(f"layer_trace and layer_ablation need decoder layers with an "
                         f"`encoder_attn` made of q_proj, k_proj, v_proj and out_proj (Marian, "
                         f"BART, mBART, Pegasus); received {type(loaded.model).__name__}.")
    return attn


def _ids(attention) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(attention, ModelAttention):
        return attention.src_ids, attention.tgt_ids
    try:
        src_ids, tgt_ids = attention
        return tuple(int(i) for i in src_ids), tuple(int(i) for i in tgt_ids)
    except (TypeError, ValueError):
        raise TypeError(f"attention must be a ModelAttention or a pair (src_ids, tgt_ids); "
                        f"received {type(attention).__name__}.") from None


@contextmanager
def _hooked(hooks):
    """Register ``(module, kind, fn)`` hooks for the duration of the block."""
    handles = []
    try:
        for module, kind, fn in hooks:
            if kind == "pre":
                handles.append(module.register_forward_pre_hook(fn, with_kwargs=True))
            else:
                handles.append(module.register_forward_hook(fn))
        yield
    finally:
        for handle in handles:
            handle.remove()


def _capture(loaded, attention, layer) -> dict:
    """One teacher-forced pass recording the layer's cross-attention, batch axis dropped."""
    attn = _cross_module(loaded, layer)
    got = {}

    def keep_output(name):
        return lambda module, args, out: got.__setitem__(name, out[0])

    def keep_inputs(module, args, kwargs):
        got["x_t"] = (args[0] if args else kwargs["hidden_states"])[0]      # (T, d_model)
        got["x_s"] = kwargs["key_value_states"][0]                          # (S, d_model)
        got["mask"] = kwargs.get("attention_mask")

    def keep_concat(module, args, kwargs):
        got["concat"] = args[0][0]                                          # (T, h * d_head)

    hooks = [(attn, "pre", keep_inputs), (attn.out_proj, "pre", keep_concat),
             (attn.q_proj, "out", keep_output("q")), (attn.k_proj, "out", keep_output("k")),
             (attn.v_proj, "out", keep_output("v")), (attn.out_proj, "out", keep_output("y"))]
    with loaded.lock, _hooked(hooks):
        out = teacher_forced(loaded, *_ids(attention))
    got["weights"] = out.cross_attentions[int(layer)][0]                    # (h, T, S)
    got["attn"] = attn
    return got


def _keep_mask(mask, n_tgt: int, n_src: int) -> np.ndarray:
    """The model's mask (None, bool, or additive with a very negative value) as True = attend."""
    if mask is None:
        return np.ones((n_tgt, n_src), dtype=bool)
    m = mask.detach()[0, 0]                                                 # (T or 1, S)
    keep = m > -1e4 if m.dtype.is_floating_point else m.bool()   # additive: 0 or ~-3e38
    return np.broadcast_to(keep.numpy().astype(bool), (n_tgt, n_src)).copy()


def layer_trace(loaded, attention, layer: int) -> AttentionTrace:
    """Every intermediate of one decoder layer's cross-attention, at piece level.

    Parameters
    ----------
    loaded : xattn.torch_models.LoadedModel
    attention : ModelAttention or (src_ids, tgt_ids)
        The sentence pair, as token ids (``ModelAttention.src_ids`` / ``tgt_ids``).
    layer : int
        Decoder layer, 0-based.

    Returns
    -------
    AttentionTrace
        Unbatched: ``q`` (n_heads, n_tgt, d_head) is ``x W_Q + b_Q`` (the model's bias is
        included, here and in ``k``, ``v``, ``output``); ``scores`` = ``q k^T``;
        ``scaled_scores`` = scores times ``1/sqrt(d_head)``; ``weights`` are the model's own
        ``cross_attentions[layer]``; ``output`` (n_tgt, d_model) is ``concat W_O + b_O``.
    """
    got = _capture(loaded, attention, layer)
    attn = got["attn"]
    h, d_head = attn.num_heads, attn.head_dim
    n_tgt, n_src = got["weights"].shape[1:]
    q, k, v = (got[n].float().numpy().reshape(-1, h, d_head).transpose(1, 0, 2)  # (h, T|S, dh)
               for n in ("q", "k", "v"))
    scores = q @ k.transpose(0, 2, 1)                                       # (h, T, S)
    scale = float(getattr(attn, "scaling", d_head ** -0.5))
    scaled = scores * np.float32(scale)
    mask = _keep_mask(got["mask"], n_tgt, n_src)                            # (T, S)
    concat = got["concat"].float().numpy()                                  # (T, d_model)
    return AttentionTrace(
        q=q, k=k, v=v, scores=scores, scaled_scores=scaled,
        masked_scores=np.where(mask, scaled, np.float32(-np.inf)), mask=mask,
        weights=got["weights"].float().numpy(),
        head_outputs=concat.reshape(n_tgt, h, d_head).transpose(1, 0, 2),  # (h, T, dh)
        concat=concat, output=got["y"].float().numpy(), scale=scale)


class _GatedCrossAttention:
    """A decoder layer's ``encoder_attn`` called like ``MultiHeadCrossAttention``, so that
    ``xattn.metrics.ablation`` can switch its heads off: a forward pre-hook on ``out_proj``
    multiplies each head's slice of the concatenated head outputs by its gate."""

    def __init__(self, attn, mask) -> None:
        self.attn, self.mask = attn, mask
        self.n_heads = attn.num_heads

    def __call__(self, decoder_state, encoder_output, encoder_mask=None, *, head_mask=None):
        import torch

        gates = torch.ones(self.n_heads) if head_mask is None else \
            torch.as_tensor(np.asarray(head_mask), dtype=torch.float32)
        per_column = gates.repeat_interleave(self.attn.head_dim)           # (h * d_head,)

        def gate(module, args, kwargs):
            return (args[0] * per_column, *args[1:]), kwargs               # (1, T, h * dh)

        with _hooked([(self.attn.out_proj, "pre", gate)]), torch.no_grad():
            y, w = self.attn(torch.as_tensor(decoder_state)[None],
                             key_value_states=torch.as_tensor(encoder_output)[None],
                             attention_mask=self.mask)
        return y[0].float().numpy(), w[0].float().numpy()                  # (T, d), (h, T, S)


def layer_ablation(loaded, attention, layer: int, heads_off=()) -> AblationResult:
    """Head importance in one decoder layer's cross-attention (Michel et al. 2019).

    The layer's inputs are recorded in one forward pass; then its ``encoder_attn`` is run with
    all heads, with each head alone switched off, and with ``heads_off`` switched off (their
    slice of ``out_proj``'s input zeroed). Changes are relative to that layer's cross-attention
    output ``||Y - Y_off|| / ||Y||``; ``Y`` includes ``out_proj``'s bias, which switching heads
    off leaves in place.

    Parameters
    ----------
    loaded, attention, layer
        As for ``layer_trace``.
    heads_off : iterable of int, default ()
        Heads to switch off together, each in ``0..n_heads-1``.

    Returns
    -------
    AblationResult
        ``per_head`` (n_heads,), ``chosen``, ``per_token`` (n_tgt,) at piece level.
    """
    with loaded.lock:     # the gate hook must never switch off heads of another pass
        got = _capture(loaded, attention, layer)
        module = _GatedCrossAttention(got["attn"], got["mask"])
        return ablation(module, got["x_t"].float().numpy(), got["x_s"].float().numpy(), None,
                        heads_off)

"""Cross-attention of one sentence pair through every decoder layer and head.

One teacher-forced forward pass with ``output_attentions=True``; without a target the model
first translates (greedy). torch is imported inside the functions only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int
from xattn.attnfile import save_attention
from xattn.models._loading import LoadedModel, ModelUnavailable
from xattn.subwords import merge_words, word_groups, word_marker, word_texts

__all__ = ["ModelAttention", "cross_attention"]


@dataclass(frozen=True, eq=False)
class ModelAttention:
    """Cross-attention of one sentence pair through every decoder layer and head.

    Attributes
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tgt, n_src), float32
        Rows: the step producing each target token; columns: source tokens. Word-level when
        ``words`` (columns of a word summed, rows of a word averaged), else piece-level.
    src_tokens, tgt_tokens : tuple of str
        Row and column labels: words (pieces joined, ``▁`` removed) or pieces.
    src_pieces, tgt_pieces : tuple of str
    src_groups, tgt_groups : ndarray of int
        Word index of each piece (``xattn.subwords.word_groups``).
    src_ids, tgt_ids : tuple of int
        The token ids of the forward pass (for ``layer_trace``).
    src_text, tgt_text : str
    translated : bool
        Whether ``tgt_text`` is the model's own (greedy) translation.
    model : str
    words : bool
    """

    weights: np.ndarray
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    src_pieces: tuple[str, ...]
    tgt_pieces: tuple[str, ...]
    src_groups: np.ndarray
    tgt_groups: np.ndarray
    src_ids: tuple[int, ...]
    tgt_ids: tuple[int, ...]
    src_text: str
    tgt_text: str
    translated: bool
    model: str
    words: bool

    def save(self, file) -> None:
        """Write the attention file (``xattn.attnfile``) for these weights and labels."""
        save_attention(file, self.weights, self.src_tokens, self.tgt_tokens, model=self.model,
                       src_text=self.src_text, tgt_text=self.tgt_text)

    def __repr__(self) -> str:
        n_l, n_h, n_t, n_s = self.weights.shape
        return (f"ModelAttention(model={self.model!r}, n_layers={n_l}, n_heads={n_h}, "
                f"n_tgt={n_t}, n_src={n_s}, words={self.words}, translated={self.translated})")


def _text(value, name: str, *, optional: bool = False) -> str:
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; received {type(value).__name__}.")
    if not value.strip() and not optional:
        raise ValueError(f"{name} must not be empty; received {value!r}.")
    return value.strip()


def cross_attention(loaded: LoadedModel, src: str, tgt: str | None = None, *,
                    words: bool = True, max_new_tokens: int = 64) -> ModelAttention:
    """Every decoder layer's cross-attention for a sentence and its translation.

    Parameters
    ----------
    loaded : LoadedModel
    src : str
        The source sentence.
    tgt : str, optional
        The target sentence. None or empty: the model translates ``src`` (greedy, one beam, at
        most ``max_new_tokens`` pieces) and the attention is that of its own translation.
    words : bool, default True
        Merge pieces into words; False keeps sentencepiece pieces.
    max_new_tokens : int, default 64

    Returns
    -------
    ModelAttention
        ``weights`` of shape (n_layers, n_heads, n_tgt, n_src), float32.
    """
    if not isinstance(loaded, LoadedModel):
        raise TypeError(f"loaded must be a LoadedModel (see load_model); received "
                        f"{type(loaded).__name__}.")
    if not isinstance(words, bool):
        raise TypeError(f"words must be True or False; received {words!r}.")
    src, tgt = _text(src, "src"), _text(tgt, "tgt", optional=True)
    max_new_tokens = check_int(max_new_tokens, "max_new_tokens", minimum=1, maximum=1024)
    tok = loaded.tokenizer
    src_ids = list(tok(src)["input_ids"])
    translated = not tgt
    if translated:
        tgt_ids = _translate(loaded, src_ids, max_new_tokens)
        tgt = tok.decode(tgt_ids, skip_special_tokens=True)
    else:
        tgt_ids = list(tok(text_target=tgt)["input_ids"])
    weights = _attention(loaded, src_ids, tgt_ids)                   # (L, H, T, S) pieces
    src_pieces = tuple(tok.convert_ids_to_tokens(src_ids))
    tgt_pieces = tuple(tok.convert_ids_to_tokens(tgt_ids))
    marker = word_marker(src_pieces + tgt_pieces)    # "▁" (sentencepiece) or "Ġ" (BART)
    specials = tok.all_special_tokens
    src_groups = word_groups(src_pieces, specials=specials, marker=marker)
    tgt_groups = word_groups(tgt_pieces, specials=specials, marker=marker)
    if words:
        weights = merge_words(weights, src_groups, tgt_groups)       # (L, H, T_words, S_words)
        src_tokens, tgt_tokens = (tuple(word_texts(p, g, marker=marker)) for p, g in
                                  ((src_pieces, src_groups), (tgt_pieces, tgt_groups)))
    else:
        src_tokens, tgt_tokens = src_pieces, tgt_pieces
    return ModelAttention(weights, src_tokens, tgt_tokens, src_pieces, tgt_pieces, src_groups,
                          tgt_groups, tuple(src_ids), tuple(tgt_ids), src, tgt, translated,
                          loaded.name, words)


def _check_length(loaded: LoadedModel, ids, side: str) -> None:
    limit = getattr(loaded.model.config, "max_position_embeddings", None)
    if isinstance(limit, int) and len(ids) > limit:
        raise ValueError(f"The {side} has {len(ids)} pieces; {loaded.name} reads at most "
                         f"{limit}. Give a shorter sentence.")


def _translate(loaded: LoadedModel, src_ids: list[int], max_new_tokens: int) -> list[int]:
    """Greedy translation, without the decoder's start token, up to and including ``</s>``."""
    import torch

    _check_length(loaded, src_ids, "source")
    limit = getattr(loaded.model.config, "max_position_embeddings", None)
    if isinstance(limit, int):      # the teacher-forced pass must fit the positions, too
        max_new_tokens = min(max_new_tokens, limit - 1)
    with loaded.lock, torch.no_grad():
        out = loaded.model.generate(input_ids=torch.tensor([src_ids]), num_beams=1,
                                    do_sample=False, max_new_tokens=max_new_tokens)
    ids = out[0].tolist()
    if ids and ids[0] == loaded.model.config.decoder_start_token_id:
        ids = ids[1:]
    eos = loaded.tokenizer.eos_token_id
    return ids[:ids.index(eos) + 1] if eos in ids else ids


def teacher_forced(loaded: LoadedModel, src_ids, tgt_ids):
    """One teacher-forced pass: the decoder reads ``tgt_ids`` shifted right by one."""
    import torch

    _check_length(loaded, src_ids, "source")
    _check_length(loaded, tgt_ids, "target")
    with loaded.lock, torch.no_grad():
        return loaded.model(input_ids=torch.tensor([list(src_ids)]),
                            labels=torch.tensor([list(tgt_ids)]), output_attentions=True,
                            use_cache=False, return_dict=True)


def _attention(loaded: LoadedModel, src_ids, tgt_ids) -> np.ndarray:
    import torch

    layers = teacher_forced(loaded, src_ids, tgt_ids).cross_attentions
    if not layers or any(a is None for a in layers):
        impl = getattr(loaded.model.config, "_attn_implementation", "?")
        raise ModelUnavailable(
            f"The model returned no cross-attention weights: its attention runs as {impl!r}, "
            f"which does not report them. Load it with attn_implementation=\"eager\" (load_model "
            f"does) or call model.set_attn_implementation(\"eager\").")
    return torch.stack([a[0] for a in layers]).float().numpy()       # (L, H, T, S)

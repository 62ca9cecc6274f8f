"""Cross-attention of real translation models (Hugging Face ``transformers``), as NumPy arrays.

The only part of xattn that uses torch and transformers, and only inside functions: importing
``xattn.models`` costs nothing where they are missing (``missing_packages`` says what to install:
``pip install -r requirements-models.txt``).

- ``load_model(name)`` loads a tokenizer and model by name, only from the deployer's allow-list
  (``allowed_models``: env ``XATTN_MODELS``, else ``DEFAULT_MODELS``), with eager attention and
  never with remote code. ``LoadedModel(model, tokenizer)`` wraps objects you already have.
- ``cross_attention(loaded, src, tgt=None)`` runs one teacher-forced forward pass with
  ``output_attentions=True`` and returns every decoder layer and head as ``(n_layers, n_heads,
  n_tgt, n_src)``; without a target the model first translates (greedy). Row ``i`` is the
  decoder step that *produces* target token ``i`` (its query is the token before it), so rows are
  labelled by the produced token. Pieces are merged into words by default (``xattn.subwords``).
- ``layer_trace`` and ``layer_ablation`` open one decoder layer's cross-attention with forward
  hooks: the real q, k, v per head, scores, weights and outputs; heads switched off before
  ``out_proj``.
- ``python -m xattn.models --list`` / ``export --model NAME --src TEXT -o FILE.npz`` (``main``).
- ``python -m xattn.models convert NAME DIR [--float16]`` (``convert``): a Marian checkpoint as
  a folder that ``xattn.marian.load_marian`` runs in NumPy, without torch (checked: one sentence
  through both).
"""

from xattn.models._attention import ModelAttention, cross_attention
from xattn.models._cli import main
from xattn.models._convert import convert
from xattn.models._layers import layer_ablation, layer_trace
from xattn.models._loading import (
    DEFAULT_MODELS,
    MODELS_ENV,
    LoadedModel,
    ModelUnavailable,
    allowed_models,
    load_model,
    missing_packages,
    use_threads,
)

__all__ = ["DEFAULT_MODELS", "MODELS_ENV", "LoadedModel", "ModelAttention", "ModelUnavailable",
           "allowed_models", "convert", "cross_attention", "layer_ablation", "layer_trace",
           "load_model", "main", "missing_packages", "use_threads"]

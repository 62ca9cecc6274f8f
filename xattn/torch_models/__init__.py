"""Cross-attention of real translation models through Hugging Face ``transformers`` (torch).

The only part of xattn that uses torch and transformers, and only inside functions: importing
``xattn.torch_models`` costs nothing where they are missing (``missing_packages`` says what to
install: ``pip install -r requirements-models.txt``). The NumPy back end (``xattn.encdec``) runs the
common encoder-decoders without them; ``xattn.backends`` chooses.

- ``load_model(name)`` loads a tokenizer and model by name, only from the deployer's allow-list
  (``xattn.translator.allowed_models``: env ``XATTN_MODELS``), with eager attention and never
  with remote code. ``LoadedModel(model, tokenizer)`` wraps objects you already have; it is a
  ``xattn.translator.Translator``, so ``cross_attention(loaded, src, tgt=None)`` (one pipeline
  for every back end) gives every decoder layer and head as ``(n_layers, n_heads, n_tgt,
  n_src)``. Row ``i`` is the decoder step that *produces* target token ``i``.
- ``layer_trace`` and ``layer_ablation`` open one decoder layer's cross-attention with forward
  hooks: the real q, k, v per head, scores, weights and outputs; heads switched off before
  ``out_proj``.
- ``python -m xattn.torch_models --list`` / ``export --model NAME --src TEXT -o FILE.npz``
  (``main``).
- ``python -m xattn.torch_models convert NAME DIR [--float16]`` (``convert``): a checkpoint with
  pickled weights as a folder that ``xattn.encdec.load_encdec`` runs in NumPy, without torch;
  ``write_folder(model, DIR)`` writes a MarianMTModel's config and safetensors (the training
  script's door).
"""

from xattn.torch_models._cli import main
from xattn.torch_models._convert import convert, write_folder
from xattn.torch_models._layers import layer_ablation, layer_trace
from xattn.torch_models._loading import LoadedModel, load_model, missing_packages, use_threads
from xattn.translator import (
    DEFAULT_MODELS,
    MODELS_ENV,
    ModelAttention,
    ModelUnavailable,
    allowed_models,
    cross_attention,
)

__all__ = ["DEFAULT_MODELS", "MODELS_ENV", "LoadedModel", "ModelAttention", "ModelUnavailable",
           "allowed_models", "convert", "cross_attention", "layer_ablation", "layer_trace",
           "load_model", "main", "missing_packages", "use_threads", "write_folder"]

"""Encoder-decoder translation models in NumPy: Marian, BART, mBART, M2M100/NLLB and T5.

No torch, no transformers: a Hugging Face folder read as it is (``config.json``,
``model.safetensors`` memory-mapped, and the tokenizer: sentencepiece files or
``tokenizer.json`` through the ``tokenizers`` library). One model (``EncoderDecoder``), its
family's differences chosen from a table (``FAMILIES``: norms before or after each block,
learned, sinusoidal or relative positions, T5's gated feed-forward and unscaled scores, ...).
Every attention of the model is ``xattn.attention.MultiHeadCrossAttention`` with the model's
weights, so Step through, Switch heads off and the sqrt(d_head) toggle work on the real
layers. ``toy-en-fr`` (a small Marian trained here) ships in it.

- ``load_encdec(name)``: the shipped English-to-French toy model (``SHIPPED_MODEL``, trained by
  ``scripts/train_marian.py``; see its MODEL_CARD.md), or a folder on the allow-list.
- ``cross_attention`` (``xattn.translator``'s, for every back end), ``layer_trace``,
  ``layer_ablation``: as in ``xattn.torch_models``. A loaded model is a
  ``xattn.translator.Translator`` with every capability: its layers opened, heads switched
  off, decoding step by step.
- ``EncoderDecoder.forward`` (teacher forcing), ``decode`` (greedy with a key/value cache, step
  by step, tokens may be forced), ``translate``.
"""

from xattn.encdec.api import (
    SHIPPED_FOLDER,
    SHIPPED_MODEL,
    cross_attention,
    layer_ablation,
    layer_trace,
    load_encdec,
    runs_here,
    teacher_forced,
    translate,
    word_level,
)
from xattn.encdec.config import FAMILIES, Family, ModelConfig, read_config
from xattn.encdec.decode import DecodeStep, Decoding, decode
from xattn.encdec.model import EncoderDecoder, ForwardPass
from xattn.encdec.tokenizer import MarianTokenizer

__all__ = ["FAMILIES", "SHIPPED_FOLDER", "SHIPPED_MODEL", "DecodeStep", "Decoding",
           "EncoderDecoder", "Family", "ForwardPass", "MarianTokenizer",
           "ModelConfig", "cross_attention", "decode", "layer_ablation", "layer_trace",
           "load_encdec", "read_config", "runs_here", "teacher_forced", "translate",
           "word_level"]

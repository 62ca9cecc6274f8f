"""A Marian translation model (opus-mt and the like) in NumPy, and a small one trained here.

No torch, no transformers: ``config.json``, ``model.safetensors`` (read by safetensors' NumPy
reader) and the tokenizer (``source.spm``, ``target.spm``, ``vocab.json``, read by
sentencepiece). Every attention of the model is ``xattn.attention.MultiHeadCrossAttention``
with the model's biases, so Step through, Switch heads off and the sqrt(d_head) toggle work
on the real layers.

- ``load_marian(name)``: the shipped English-to-French toy model (``SHIPPED_MODEL``, trained by
  ``scripts/train_marian.py``; see its MODEL_CARD.md), or a folder on the allow-list written
  by ``python -m xattn.models convert NAME DIR``.
- ``cross_attention`` (``xattn.translator``'s, for every back end), ``layer_trace``,
  ``layer_ablation``: as in ``xattn.models``. A loaded model is a ``xattn.translator.Translator``
  with every capability: its layers opened, heads switched off, decoding step by step.
- ``MarianMT.forward`` (teacher forcing), ``decode`` (greedy with a key/value cache, step by
  step, tokens may be forced), ``translate``.
"""

from xattn.marian.api import (
    SHIPPED_FOLDER,
    SHIPPED_MODEL,
    cross_attention,
    layer_ablation,
    layer_trace,
    load_marian,
    runs_here,
    teacher_forced,
    translate,
    word_level,
)
from xattn.marian.config import MarianConfig, read_config
from xattn.marian.decode import DecodeStep, Decoding, decode
from xattn.marian.model import ForwardPass, MarianMT
from xattn.marian.tokenizer import MarianTokenizer

__all__ = ["SHIPPED_FOLDER", "SHIPPED_MODEL", "DecodeStep", "Decoding", "ForwardPass",
           "MarianConfig", "MarianMT", "MarianTokenizer", "cross_attention", "decode",
           "layer_ablation", "layer_trace", "load_marian", "read_config", "runs_here",
           "teacher_forced", "translate", "word_level"]

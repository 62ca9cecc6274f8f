"""Speech to text in NumPy: Whisper from a Hugging Face folder as it is, no torch.

- ``log_mel(audio)`` (``FrontEnd``): the log-mel features, equal to transformers'
  ``WhisperFeatureExtractor`` within float32.
- ``Whisper.from_folder(folder)``: ``config.json``, ``model.safetensors`` (memory-mapped),
  ``preprocessor_config.json``, ``generation_config.json`` and ``tokenizer.json`` where
  present (whisper-tiny, base, small, ... layouts). ``model.forward(features,
  decoder_input_ids)`` gives the logits and every layer's cross-attention ``(n_layers,
  n_heads, n_tgt, n_frames)`` over the encoder's 1500 positions of 20 ms.
- ``greedy(model, features)``: transcription with a key/value cache, timestamps off.
"""

from xattn.speech.config import Generation, WhisperConfig, read_generation, read_whisper_config
from xattn.speech.decode import Transcription, greedy
from xattn.speech.features import FrontEnd, log_mel, mel_filters
from xattn.speech.model import Whisper, WhisperPass

__all__ = ["FrontEnd", "Generation", "Transcription", "Whisper", "WhisperConfig",
           "WhisperPass", "greedy", "log_mel", "mel_filters", "read_generation",
           "read_whisper_config"]

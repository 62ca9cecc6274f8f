"""What a Whisper folder declares: its sizes (``config.json``) and how it starts and stops a
transcription (``generation_config.json``), each field checked where it is read.

Defaults are transformers' ``WhisperConfig``'s (whisper-tiny's sizes). Only what changes the
numbers is kept; dropout, SpecAugment and the like are ignored. Sizes are bounded again by
the weights present (``xattn.speech.weights``) before anything is built from them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from xattn._checks import quote
from xattn.encdec.config import CONFIG_BYTES
from xattn.encdec.files import present, read_json
from xattn.encdec.layers import ACTIVATIONS

__all__ = ["WhisperConfig", "Generation", "read_whisper_config", "read_generation"]

_MAX_LIST = 4096           # suppress_tokens of the Hub's checkpoints hold about 90 ids


@dataclass(frozen=True)
class WhisperConfig:
    """The sizes of one Whisper model (``config.json``'s names).

    Attributes
    ----------
    vocab_size : int
        Rows of the token embedding (51,865; 51,866 for large-v3).
    num_mel_bins : int
        Mel bins of the features (80; 128 for large-v3).
    d_model : int
    encoder_layers, decoder_layers, encoder_attention_heads, decoder_attention_heads : int
    encoder_ffn_dim, decoder_ffn_dim : int
    max_source_positions : int
        Encoder positions (1500): the features hold twice as many frames (conv2 has stride 2).
    max_target_positions : int
        Longest token sequence the decoder has positions for (448).
    activation_function : str
        One of ``xattn.encdec.layers.ACTIVATIONS`` (``gelu``).
    decoder_start_token_id, eos_token_id, pad_token_id : int
    """

    vocab_size: int = 51865
    num_mel_bins: int = 80
    d_model: int = 384
    encoder_layers: int = 4
    decoder_layers: int = 4
    encoder_attention_heads: int = 6
    decoder_attention_heads: int = 6
    encoder_ffn_dim: int = 1536
    decoder_ffn_dim: int = 1536
    max_source_positions: int = 1500
    max_target_positions: int = 448
    activation_function: str = "gelu"
    decoder_start_token_id: int = 50257
    eos_token_id: int = 50257
    pad_token_id: int = 50256

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            kind = str if f.name == "activation_function" else int
            if type(value) is not kind:
                raise ValueError(f"config.json: {f.name} must be {kind.__name__}; received "
                                 f"{type(value).__name__} {quote(value)}.")
            low = 0 if f.name.endswith("_id") else 1
            if kind is int and value < low:
                raise ValueError(f"config.json: {f.name} must be >= {low}; received {value}.")
        for side in ("encoder", "decoder"):
            heads = getattr(self, f"{side}_attention_heads")
            if self.d_model % heads:
                raise ValueError(f"config.json: {side}_attention_heads must divide d_model="
                                 f"{self.d_model}; received {heads}.")
        if self.activation_function not in ACTIVATIONS:
            raise ValueError(f"config.json: activation_function must be one of "
                             f"{', '.join(ACTIVATIONS)}; received "
                             f"{quote(self.activation_function)}.")
        for name in ("decoder_start_token_id", "eos_token_id", "pad_token_id"):
            if getattr(self, name) >= self.vocab_size:
                raise ValueError(f"config.json: {name} must be below vocab_size="
                                 f"{self.vocab_size}; received {getattr(self, name)}.")

    @property
    def n_frames(self) -> int:
        """Feature frames the encoder reads: 2 x ``max_source_positions`` (3000)."""
        return 2 * self.max_source_positions


@dataclass(frozen=True)
class Generation:
    """How greedy decoding starts and what it may not say (``generation_config.json``).

    Attributes
    ----------
    decoder_start_token_id, eos_token_id : int
    forced_decoder_ids : tuple of (int, int or None)
        (position, token) pairs from position 1 on: the prompt after the start token
        (language, task), as the Hub's checkpoints give it; a None language is detected.
    lang_ids : tuple of int
        The language tokens (``lang_to_id``'s values) of a multilingual model, else empty.
    no_timestamps_token_id : int or None
        ``<|notimestamps|>``, appended to the prompt (timestamps off), where the folder has it.
    suppress_tokens : tuple of int
        Never produced.
    begin_suppress_tokens : tuple of int
        Not produced at the first step after the prompt (a space, end of text).
    alignment_heads : tuple of (int, int)
        The (decoder layer, head) pairs OpenAI chose for word timing, where the folder says.
    """

    decoder_start_token_id: int
    eos_token_id: int
    forced_decoder_ids: tuple[tuple[int, int | None], ...] = ()
    lang_ids: tuple[int, ...] = ()
    no_timestamps_token_id: int | None = None
    suppress_tokens: tuple[int, ...] = ()
    begin_suppress_tokens: tuple[int, ...] = ()
    alignment_heads: tuple[tuple[int, int], ...] = ()

    @property
    def detects_language(self) -> bool:
        """Whether the prompt's language is the model's guess (a multilingual model whose
        forced ids give none), as transformers' ``generate`` decides."""
        forced = [t for _, t in self.forced_decoder_ids]
        return bool(self.lang_ids) and (not forced or forced[0] is None)

    def prompt(self, language: int | None = None) -> tuple[int, ...]:
        """The tokens every transcription starts with: start, the language (``language``:
        the detected one, where ``detects_language``), the forced ones, and
        ``<|notimestamps|>``, as transformers' ``WhisperGenerationMixin`` builds them."""
        tokens = [self.decoder_start_token_id, *(t for _, t in self.forced_decoder_ids)]
        if self.detects_language and language is not None:
            if len(tokens) > 1:
                tokens[1] = language
            else:
                tokens.append(language)
        tokens = [t for t in tokens if t is not None]
        if self.no_timestamps_token_id is not None and tokens[-1] != \
                self.no_timestamps_token_id:
            tokens.append(self.no_timestamps_token_id)
        return tuple(tokens)


def read_whisper_config(path) -> WhisperConfig:
    """``WhisperConfig`` from a ``config.json`` read as untrusted input.

    Raises
    ------
    ValueError
        Not JSON, not ``model_type: whisper``, or a field of the wrong type or range.
    """
    raw = read_json(path, CONFIG_BYTES)
    if raw.get("model_type") != "whisper":
        raise ValueError(f"config.json: model_type must be 'whisper' for a speech model; "
                         f"received {quote(raw.get('model_type'))}.")
    values = {}
    for f in fields(WhisperConfig):
        value = raw.get(f.name)
        if isinstance(value, list) and len(value) == 1 and f.name.endswith("_id"):
            value = value[0]
        if value is not None:
            values[f.name] = value
    return WhisperConfig(**values)


def _ids(raw: dict, name: str, vocab: int) -> tuple[int, ...]:
    value = raw.get(name) or []
    if not isinstance(value, list) or len(value) > _MAX_LIST or not all(
            type(t) is int and 0 <= t < vocab for t in value):
        raise ValueError(f"generation_config.json: {name} must be a list of at most "
                         f"{_MAX_LIST} token ids below {vocab}; received {quote(value)}.")
    return tuple(value)


def _forced(raw: dict, vocab: int) -> tuple[tuple[int, int | None], ...]:
    pairs = raw.get("forced_decoder_ids") or []
    ok = isinstance(pairs, list) and len(pairs) <= 16 and all(
        isinstance(p, list) and len(p) == 2 and p[0] == i + 1 and
        (p[1] is None or type(p[1]) is int and 0 <= p[1] < vocab) for i, p in enumerate(pairs))
    if not ok:
        raise ValueError(f"generation_config.json: forced_decoder_ids must be [position, "
                         f"token] pairs for positions 1, 2, 3, ... with tokens below {vocab}; "
                         f"received {quote(pairs)}.")
    return tuple((p[0], p[1]) for p in pairs)


def _languages(raw: dict, vocab: int) -> tuple[int, ...]:
    table = raw.get("lang_to_id") or {}
    if not isinstance(table, dict) or len(table) > _MAX_LIST or not all(
            type(t) is int and 0 <= t < vocab for t in table.values()):
        raise ValueError(f"generation_config.json: lang_to_id must map at most {_MAX_LIST} "
                         f"language tokens to ids below {vocab}.")
    return tuple(sorted(set(table.values())))


def _heads(raw: dict, config: WhisperConfig) -> tuple[tuple[int, int], ...]:
    pairs = raw.get("alignment_heads") or []
    c = config
    if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and type(p[0]) is int and type(p[1]) is int
            and 0 <= p[0] < c.decoder_layers and 0 <= p[1] < c.decoder_attention_heads
            for p in pairs):
        raise ValueError(f"generation_config.json: alignment_heads must be [layer, head] "
                         f"pairs within {c.decoder_layers} layers and "
                         f"{c.decoder_attention_heads} heads; received {quote(pairs)}.")
    return tuple((p[0], p[1]) for p in pairs)


def read_generation(folder, config: WhisperConfig) -> Generation:
    """``Generation`` from ``folder/generation_config.json``, else from ``config``'s ids.

    A ``None`` language in ``forced_decoder_ids`` is detected when decoding (``greedy``).
    ``language`` and ``task`` set in the file (transformers' newer way to ask for them) are
    refused: give the prompt's tokens to ``greedy`` instead.

    Raises
    ------
    ValueError
        A field of the wrong type, a token id beyond the vocabulary, or ``language``/``task``.
    """
    path = Path(folder) / "generation_config.json"
    raw = read_json(path, CONFIG_BYTES) if present(path) else {}
    for name in ("language", "task"):
        if raw.get(name) is not None:
            raise ValueError(f"generation_config.json sets {name}={quote(raw[name])}, which "
                             f"is not read here; remove it and give the prompt's tokens to "
                             f"greedy(model, features, prompt=...) instead.")
    vocab = config.vocab_size
    ids = {}
    for name in ("decoder_start_token_id", "eos_token_id", "no_timestamps_token_id"):
        value = raw.get(name, getattr(config, name, None))
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if value is not None and (type(value) is not int or not 0 <= value < vocab):
            raise ValueError(f"generation_config.json: {name} must be a token id below "
                             f"{vocab}; received {quote(value)}.")
        ids[name] = value
    return Generation(**ids, forced_decoder_ids=_forced(raw, vocab),
                      lang_ids=_languages(raw, vocab), alignment_heads=_heads(raw, config),
                      suppress_tokens=_ids(raw, "suppress_tokens", vocab),
                      begin_suppress_tokens=_ids(raw, "begin_suppress_tokens", vocab))

"""Whisper in NumPy, from a Hugging Face folder as it is: load, encode, teacher forcing.

Reads top to bottom like transformers' ``WhisperForConditionalGeneration``::

    features  (n_mels, 3000)              xattn.speech.features.log_mel(audio)
    encoder:  x = gelu(conv2(gelu(conv1(features)))) + embed_positions     (1500, d_model)
              x = layer(x) ...;  x = layer_norm(x)
    decoder:  y = embed_tokens(ids) + embed_positions[past:past + n]
              y = layer(y, x) ...;  y = layer_norm(y)
    logits  = y @ proj_out.T        (proj_out: the token embedding, tied)

Row ``i`` of every decoder output is the step that reads ``decoder_input_ids[i]`` and
predicts the token after it (transformers' ``forward``). Greedy decoding with a key/value
cache is ``xattn.speech.decode``. The weights map the file; nothing is copied but a norm's
vectors, and the encoder works a block of rows at a time (``xattn.speech.layers``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xattn._checks import as_finite, check_bool, check_int, quote
from xattn.encdec.files import present
from xattn.encdec.layers import activation, norm
from xattn.encdec.weights import headers, read_tensors, weight_files
from xattn.speech.config import Generation, WhisperConfig, read_generation, read_whisper_config
from xattn.speech.features import FrontEnd, log_mel
from xattn.speech.layers import conv1d, decoder_layer, encoder_layer, gelu_rows
from xattn.speech.tokenizer import SpeechTokenizer
from xattn.speech.weights import (
    bound_sizes,
    build_decoder_layer,
    build_encoder_layer,
    check_tensors,
    norm_of,
)

__all__ = ["Whisper", "WhisperPass"]


@dataclass(frozen=True, eq=False)
class WhisperPass:
    """One teacher-forced pass: what every decoder layer's cross-attention read and did.

    Attributes
    ----------
    decoder_input_ids : tuple of int
    encoder_output : ndarray of shape (n_src, d_model)
        n_src = 1500 positions of 20 ms for 30 s.
    cross_inputs : ndarray of shape (n_layers, n_tgt, d_model)
    cross_attentions : ndarray of shape (n_layers, n_heads, n_tgt, n_src)
        transformers' ``cross_attentions`` stacked (its batch axis dropped).
    logits : ndarray of shape (n_tgt, vocab_size), or None
    """

    decoder_input_ids: tuple[int, ...]
    encoder_output: np.ndarray
    cross_inputs: np.ndarray
    cross_attentions: np.ndarray
    logits: np.ndarray | None


def _front_of(config: WhisperConfig) -> FrontEnd:
    """Whisper's front end cut to the clip the encoder reads (30 s for 1500 positions; a
    test's small model reads less), for a folder without ``preprocessor_config.json``."""
    front = FrontEnd(feature_size=config.num_mel_bins)
    seconds, rest = divmod(config.n_frames * front.hop_length, front.sampling_rate)
    if rest or not 1 <= seconds <= 60:
        raise ValueError(f"config.json: max_source_positions={config.max_source_positions} "
                         f"is not a whole number of seconds (1 to 60) of 20 ms positions; "
                         f"give a preprocessor_config.json that matches it.")
    return FrontEnd(feature_size=config.num_mel_bins, chunk_length=seconds)


class Whisper:
    """A Whisper speech-to-text model in float32: config, weights, front end, generation
    settings and (where the folder has one) tokenizer.

    Build it with ``Whisper.from_folder``. Passes hold no state: one model serves any number
    of threads.

    Attributes
    ----------
    config : WhisperConfig
    front : FrontEnd
    generation : Generation
    tokenizer : SpeechTokenizer or None
    name : str
    encoder_layers, decoder_layers : tuple of EncoderLayer, DecoderLayer
    embed_tokens, proj_out : ndarray of shape (vocab_size, d_model)
        The same array where tied.
    nbytes : int
        Bytes of the weights (mapped, not copied).
    """

    def __init__(self, config: WhisperConfig, tensors: dict, *, front: FrontEnd | None = None,
                 generation: Generation | None = None,
                 tokenizer: SpeechTokenizer | None = None, name: str = "custom") -> None:
        pre = check_tensors(tensors, config)
        self.config, self.name, self.tokenizer = config, name, tokenizer
        self.front = _front_of(config) if front is None else front
        if self.front.feature_size != config.num_mel_bins or \
                self.front.n_frames != config.n_frames:
            raise ValueError(f"preprocessor_config.json gives {self.front.feature_size} mel "
                             f"bins and {self.front.n_frames} frames; config.json expects "
                             f"{config.num_mel_bins} and {config.n_frames}.")
        self.generation = generation or Generation(config.decoder_start_token_id,
                                                   config.eos_token_id)
        enc, dec = f"{pre}encoder.", f"{pre}decoder."
        self.conv1 = (tensors[f"{enc}conv1.weight"], tensors[f"{enc}conv1.bias"])
        self.conv2 = (tensors[f"{enc}conv2.weight"], tensors[f"{enc}conv2.bias"])
        self.encoder_positions = tensors[f"{enc}embed_positions.weight"]
        self.decoder_positions = tensors[f"{dec}embed_positions.weight"]
        self.embed_tokens = tensors[f"{dec}embed_tokens.weight"]
        self.proj_out = tensors.get("proj_out.weight", self.embed_tokens)
        self.encoder_norm = norm_of(tensors, f"{enc}layer_norm")
        self.decoder_norm = norm_of(tensors, f"{dec}layer_norm")
        self.encoder_layers = tuple(build_encoder_layer(tensors, f"{enc}layers.{i}.", config)
                                    for i in range(config.encoder_layers))
        self.decoder_layers = tuple(build_decoder_layer(tensors, f"{dec}layers.{i}.", config)
                                    for i in range(config.decoder_layers))
        self.act = activation(config.activation_function)
        self.nbytes = sum({id(a): a.nbytes for a in tensors.values()}.values())

    @classmethod
    def from_folder(cls, folder, *, name: str | None = None) -> Whisper:
        """The model of a folder as it is: ``config.json`` (bounded JSON), the safetensors
        headers (the config's layer counts bounded by the tensors present), then the weights,
        memory-mapped, ``preprocessor_config.json``, ``generation_config.json`` and
        ``tokenizer.json`` where present. Pickle files are refused, never opened.

        Raises
        ------
        ValueError
            Not a folder, or a file missing, too large, of another architecture, or not
            matching another (said in one line).
        """
        folder = Path(folder)
        if not folder.is_dir():
            raise ValueError(f"{quote(str(folder))} is not a folder.")
        config = read_whisper_config(folder / "config.json")
        files = weight_files(folder)
        bound_sizes(config, len(headers(files)), files[0].name)
        front = FrontEnd.from_folder(folder) if present(folder / "preprocessor_config.json") \
            else None
        return cls(config, read_tensors(files), front=front,
                   generation=read_generation(folder, config),
                   tokenizer=SpeechTokenizer.from_folder(folder),
                   name=str(folder) if name is None else name)

    @property
    def n_layers(self) -> int:
        """Decoder layers, each with its own cross-attention."""
        return self.config.decoder_layers

    @property
    def n_heads(self) -> int:
        return self.config.decoder_attention_heads

    def __repr__(self) -> str:
        c = self.config
        return (f"Whisper(name={self.name!r}, layers={c.encoder_layers}+{c.decoder_layers}, "
                f"n_heads={self.n_heads}, d_model={c.d_model}, n_mels={c.num_mel_bins}, "
                f"vocab={c.vocab_size}, MB={self.nbytes / 1e6:.1f})")

    # ------------------------------------------------------------------ the two stacks
    def features(self, audio) -> np.ndarray:
        """``log_mel(audio)`` with this model's front end, (n_mels, n_frames)."""
        return log_mel(audio, self.front)

    def encode(self, features) -> np.ndarray:
        """The encoder's output for one clip's features, (max_source_positions, d_model)."""
        x = self.check_features(features).T                               # (3000, n_mels)
        x = gelu_rows(conv1d(x, *self.conv1), self.act)                   # (3000, d_model)
        x = gelu_rows(conv1d(x, *self.conv2, stride=2), self.act)         # (1500, d_model)
        x += self.encoder_positions
        for layer in self.encoder_layers:
            x = encoder_layer(x, layer, self.act)
        return norm(x, self.encoder_norm)

    def embed(self, ids, past: int = 0) -> np.ndarray:
        """Token vectors plus learned positions ``past .. past + n``, (n, d_model)."""
        x = np.asarray(self.embed_tokens[ids], np.float32)                # (n, d_model)
        return x + self.decoder_positions[past:past + len(ids)]

    def decoder(self, y: np.ndarray, enc: np.ndarray, caches, gates=None):
        """Every decoder layer on new positions ``y`` (n_new, d_model): the output (normed),
        each layer's cross-attention input (L, n_new, d_model) and weights (L, h, n_new,
        n_src), and the self-attention caches with the new positions."""
        inputs, weights, out = [], [], []
        for i, layer in enumerate(self.decoder_layers):
            y, x_in, w, cache = decoder_layer(y, layer, self.act, enc, caches[i],
                                              None if gates is None else gates[i])
            inputs.append(x_in)
            weights.append(w)
            out.append(cache)
        return norm(y, self.decoder_norm), np.stack(inputs), np.stack(weights), out

    def logits(self, h: np.ndarray) -> np.ndarray:
        """``h @ proj_out.T``: (n, d_model) to (n, vocab_size)."""
        return h @ self.proj_out.T                                        # (n, V)

    def forward(self, features, decoder_input_ids, *, head_mask=None,
                logits: bool = True) -> WhisperPass:
        """Teacher forcing, as transformers' ``forward(input_features, decoder_input_ids)``.

        Parameters
        ----------
        features : array_like of shape (num_mel_bins, 2 * max_source_positions)
            ``log_mel`` of a clip (or ``self.features(audio)``).
        decoder_input_ids : sequence of int
            What the decoder reads (the start token first); row i predicts the token after
            ``decoder_input_ids[i]``.
        head_mask : array_like of shape (n_layers, n_heads), optional
            Gates on each layer's cross-attention heads before ``out_proj``.
        logits : bool, default True
            False skips the output projection.

        Returns
        -------
        WhisperPass
        """
        ids = self.check_ids(decoder_input_ids)
        gates = self.check_head_mask(head_mask)
        enc = self.encode(features)                                       # (S, d_model)
        y, inputs, weights, _ = self.decoder(self.embed(ids), enc, [None] * self.n_layers,
                                             gates)
        return WhisperPass(tuple(ids), enc, inputs, weights,
                           self.logits(y) if check_bool(logits, "logits") else None)

    # ------------------------------------------------------------------ checks
    def check_features(self, features) -> np.ndarray:
        x = as_finite(features, "features", np.float32)
        shape = (self.config.num_mel_bins, self.config.n_frames)
        if x.shape != shape:
            raise ValueError(f"features must have shape {shape} (mel bins, frames: "
                             f"{self.front.chunk_length} s); received shape {x.shape}. Make "
                             f"them with model.features(audio), which pads and cuts the clip.")
        return x

    def check_ids(self, ids) -> list[int]:
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"decoder_input_ids must be token ids; received a string "
                            f"{quote(ids)}.")
        out = [check_int(i, "each of decoder_input_ids", minimum=0,
                         maximum=self.config.vocab_size - 1) for i in ids]
        limit = self.config.max_target_positions
        if not 1 <= len(out) <= limit:
            raise ValueError(f"decoder_input_ids must hold 1 to {limit} tokens (the decoder's "
                             f"positions); received {len(out)}.")
        return out

    def check_head_mask(self, head_mask) -> np.ndarray | None:
        if head_mask is None:
            return None
        gates = as_finite(head_mask, "head_mask", np.float32)
        if gates.shape != (self.n_layers, self.n_heads):
            raise ValueError(f"head_mask must have shape ({self.n_layers}, {self.n_heads}) "
                             f"(layers, heads); received shape {gates.shape}.")
        return gates

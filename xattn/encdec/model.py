"""One encoder-decoder in NumPy for Marian, BART, mBART, M2M100/NLLB and T5: load, encode,
teacher forcing. Its family's row (``xattn.encdec.config.FAMILIES``) says how it differs.

Reads top to bottom like transformers' ``*ForConditionalGeneration``::

    encoder:  x = embed_tokens(src) * sqrt(d_model)? + positions;  norm?;  x = layer(x) ...;  norm?
    decoder:  y = embed_tokens([start] + tgt[:-1]) * sqrt(d_model)? + positions;  norm?
              y = layer(y, encoder output) ...;  norm?
    logits = y (* d_model ** -0.5)? @ lm_head.T (+ final_logits_bias)?

Row ``i`` of every output is the decoder step that *produces* target token ``i`` (its query is
the token before it). Greedy decoding with a cache is in ``xattn.encdec.decode``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xattn._checks import as_finite, check_bool, check_int, quote
from xattn._floats import to_float32
from xattn.ablation import AblationResult, ablation
from xattn.attention import AttentionTrace, MultiHeadCrossAttention
from xattn.decoding import decoded
from xattn.encdec.config import ModelConfig, read_config
from xattn.encdec.decode import decode
from xattn.encdec.effects import effects, logit_lens
from xattn.encdec.files import present
from xattn.encdec.hub_tokenizer import HubTokenizer
from xattn.encdec.layers import Norm, activation, decoder_layer, encoder_layer, norm
from xattn.encdec.positions import (
    fairseq_positions,
    learned_positions,
    relative_bias,
    sinusoidal_positions,
)
from xattn.encdec.tokenizer import MarianTokenizer
from xattn.encdec.weights import (
    bound_sizes,
    build_layer,
    check_tensors,
    headers,
    read_tensors,
    weight_files,
)

__all__ = ["EncoderDecoder", "ForwardPass"]

_LOGIT_ROWS = 8192   # lm_head rows cast from 16 bits at a time (not the whole matrix at once)


@dataclass(frozen=True, eq=False)
class ForwardPass:
    """One teacher-forced pass: what every decoder layer's cross-attention read and did.

    Attributes
    ----------
    src_ids, tgt_ids : tuple of int
        ``tgt_ids`` are the tokens produced (the decoder reads them shifted right by one).
    encoder_output : ndarray of shape (n_src, d_model)
    cross_inputs : ndarray of shape (n_layers, n_tgt, d_model)
        Each decoder layer's ``encoder_attn`` input (its queries come from it).
    cross_attention : ndarray of shape (n_layers, n_heads, n_tgt, n_src)
    decoder_output : ndarray of shape (n_tgt, d_model)
    logits : ndarray of shape (n_tgt, decoder_vocab_size), or None
    head_mask : ndarray of shape (n_layers, n_heads), or None
        Cross-attention gates this pass used.
    """

    src_ids: tuple[int, ...]
    tgt_ids: tuple[int, ...]
    encoder_output: np.ndarray
    cross_inputs: np.ndarray
    cross_attention: np.ndarray
    decoder_output: np.ndarray
    logits: np.ndarray | None
    head_mask: np.ndarray | None


class EncoderDecoder:
    """An encoder-decoder translation model: config, tokenizer and weights, in float32.

    Build it with ``xattn.encdec.load_encdec`` (the deployer's allow-list) or
    ``EncoderDecoder.from_folder``. Passes hold no state: one model serves any number of
    threads. The weights map the file (``xattn.encdec.tensorfile``) and keep its dtype.

    Attributes
    ----------
    config : ModelConfig
    tokenizer
        ``xattn.encdec.tokenizer.MarianTokenizer`` or ``xattn.encdec.hub_tokenizer.
        HubTokenizer``.
    name : str
    embed_tokens_encoder, embed_tokens_decoder, lm_head : ndarray (vocab, d_model)
        The same array where tied.
    final_logits_bias : ndarray of shape (decoder_vocab_size,), or None
    encoder_layers : tuple of EncoderLayer
    decoder_layers : tuple of DecoderLayer
    """

    def __init__(self, config: ModelConfig, tokenizer, tensors: dict, *,
                 name: str = "custom") -> None:
        parts = check_tensors(tensors, config)
        tokenizer.check(config)
        self.config, self.tokenizer, self.name = config, tokenizer, name
        f = self.family = config.family

        def t(part: str):
            return tensors[parts[part]] if part in parts else None

        def norm_of(part: str) -> Norm:
            bias = t(f"{part}.b")
            return Norm(to_float32(t(f"{part}.w")), None if bias is None else to_float32(bias),
                        config.layer_norm_eps, rms=f.rms_norm)

        self.embed_tokens_encoder, self.embed_tokens_decoder = t("embed.encoder"), \
            t("embed.decoder")
        self.lm_head = t("lm_head")
        bias = t("logits_bias")
        self.final_logits_bias = None if bias is None else to_float32(bias)[0]
        self.embed_scale = np.float32(np.sqrt(config.d_model) if config.scale_embedding else 1)
        self.act = activation(config.activation_function)
        sides = ("encoder", "decoder")
        self.positions = {s: t(f"positions.{s}") for s in sides}
        self.relative = {s: t(f"relative_bias.{s}") for s in sides}
        self.embedding_norm = {s: norm_of(f"embedding_norm.{s}") if f.embedding_norm else None
                               for s in sides}
        self.final_norm = {s: norm_of(f"final_norm.{s}") if f.final_norm else None
                           for s in sides}
        self.encoder_layers = tuple(build_layer(t, norm_of, "encoder", i, config)
                                    for i in range(config.encoder_layers))
        self.decoder_layers = tuple(build_layer(t, norm_of, "decoder", i, config)
                                    for i in range(config.decoder_layers))
        self.nbytes = sum({id(a): a.nbytes for a in tensors.values()}.values())

    @classmethod
    def from_folder(cls, folder, *, dtype: str = "float32",
                    name: str | None = None) -> EncoderDecoder:
        """The model of a folder as it is: ``config.json`` first (bounded JSON), then the
        safetensors headers, so that the sizes the config declares are bounded by the tensors
        present before anything is built; then the tokenizer (Marian's sentencepiece pair, or
        a Hugging Face folder's), then the weights, memory-mapped. ``dtype="float16"`` stores
        float32 matrices in half the memory. No allow-list here: ``load_encdec`` is the door
        for names from a link.

        Raises
        ------
        ValueError
            Not a folder, or a file missing, too large, of another architecture, or not
            matching another (said in one line).
        """
        folder = Path(folder)
        if not folder.is_dir():
            raise ValueError(f"{quote(str(folder))} is not a folder.")
        config = read_config(folder / "config.json")
        files = weight_files(folder)
        bound_sizes(config, headers(files), files[0].name)
        tokenizer = MarianTokenizer.from_folder(folder) if config.model_type == "marian" and \
            present(folder / "source.spm") else HubTokenizer.from_folder(folder, config.family)
        return cls(config, tokenizer, read_tensors(files, dtype),
                   name=str(folder) if name is None else name)

    @property
    def n_layers(self) -> int:
        """Decoder layers, each with its own cross-attention."""
        return self.config.decoder_layers

    @property
    def n_heads(self) -> int:
        return self.config.decoder_attention_heads

    @property
    def d_model(self) -> int:
        return self.config.d_model

    def __repr__(self) -> str:
        c = self.config
        return (f"EncoderDecoder(name={self.name!r}, family={c.model_type}, layers="
                f"{c.encoder_layers}+{c.decoder_layers}, n_heads={self.n_heads}, d_model="
                f"{c.d_model}, vocab={c.decoder_vocab_size}, MB={self.nbytes / 1e6:.1f})")

    # ------------------------------------------------------ as a xattn.translator.Translator
    @property
    def rescalable(self) -> bool:
        """Whether a trace can leave the division by sqrt(d_head) out (T5 never divides)."""
        return self.family.scaled_scores

    @property
    def max_tokens(self) -> int:
        return self.config.max_position_embeddings

    @property
    def specials(self) -> tuple[str, ...]:
        return self.tokenizer.specials

    def tokenize(self, text: str, side: str = "source") -> list[int]:
        return self.tokenizer.encode(text, side=side)

    def pieces(self, ids) -> list[str]:
        return self.tokenizer.id_to_piece(ids)

    def detokenize(self, ids) -> str:
        return self.tokenizer.decode(ids)

    def translate_ids(self, src_ids, max_new_tokens: int) -> list[int]:
        return list(decode(self, src_ids, max_new_tokens=max_new_tokens).tgt_ids)

    def greedy(self, src_ids, **kwargs):
        """``xattn.encdec.decode(self, src_ids, **kwargs)``: step by step, forced ids."""
        return decode(self, src_ids, **kwargs)

    def attention(self, src_ids, tgt_ids) -> np.ndarray:
        return self.forward(src_ids, tgt_ids, logits=False).cross_attention

    def trace_layer(self, src_ids, tgt_ids, layer: int, scale: bool = True) -> AttentionTrace:
        return self.layer_trace(self.forward(src_ids, tgt_ids, logits=False), layer, scale=scale)

    def switch_heads_off(self, src_ids, tgt_ids, layer: int, heads_off=()) -> AblationResult:
        return self.layer_ablation(self.forward(src_ids, tgt_ids, logits=False), layer,
                                   heads_off)

    def query_inputs(self, src_ids, tgt_ids, layer: int) -> tuple:
        """Decoder layer ``layer``'s cross-attention input x (n_tgt, d_model) and its query
        projection ``W_Q`` (d_model, n_heads * d_head), ``b_Q`` or None, as float32."""
        attn = self.cross(layer)
        x = self.forward(src_ids, tgt_ids, logits=False).cross_inputs[layer]
        return x, to_float32(attn.W_Q), attn.b_Q

    def decode_steps(self, src_ids, forced=(), words: bool = False):
        """Greedy decoding step by step (``xattn.decoding.Decoded``), ``forced``: pairs
        (step, text) taken instead of the most likely token; ``words``: rows over words; its
        ``lens`` is ``xattn.encdec.effects.logit_lens`` on this model."""
        return decoded(self, src_ids, forced, words=words,
                       lens=lambda src, tgt: logit_lens(self, src, tgt))

    def effects(self, src_ids, tgt_ids, row: int, words: bool = True):
        """``xattn.encdec.effects.effects``: target word ``row`` with each source word masked
        and each cross-attention head switched off."""
        return effects(self, src_ids, tgt_ids, row, words=words)

    # ------------------------------------------------------------------ the two stacks
    def embed(self, ids, side: str, past: int = 0) -> np.ndarray:
        """Token vectors (scaled) plus positions (normed where the family norms them) of
        ``ids`` after ``past`` earlier ones on ``side`` ("encoder"/"decoder"), (n, d_model)."""
        table = self.embed_tokens_encoder if side == "encoder" else self.embed_tokens_decoder
        x = to_float32(np.asarray(table[ids]))                             # (n, d_model)
        if self.embed_scale != 1:
            x *= self.embed_scale
        kind, c = self.family.positions, self.config
        if kind == "sinusoidal":
            x += sinusoidal_positions(len(ids), c.d_model, past)
        elif kind == "learned":
            x += learned_positions(self.positions[side], len(ids), past)
        elif kind == "fairseq":
            x += fairseq_positions(ids, c.pad_token_id, c.d_model, past)
        if self.embedding_norm[side] is not None:
            x = norm(x, self.embedding_norm[side])
        return x

    def self_bias(self, side: str, n_new: int, past: int = 0) -> np.ndarray | None:
        """T5's self-attention position bias of ``n_new`` positions after ``past``, (h, n_new,
        past + n_new); None for the other families."""
        table = self.relative[side]
        if table is None:
            return None
        return relative_bias(table, n_new, past + n_new, bidirectional=side == "encoder",
                             max_distance=self.config.relative_attention_max_distance,
                             past=past)

    def encode(self, src_ids) -> np.ndarray:
        """The encoder's output for one source sentence, (n_src, d_model)."""
        ids = self.check_ids(src_ids, "src_ids", self.config.vocab_size)
        x = self.embed(ids, "encoder")                                     # (S, d_model)
        bias = self.self_bias("encoder", len(ids))                         # (h, S, S) or None
        for layer in self.encoder_layers:
            x = encoder_layer(x, layer, self.act, self.family.pre_norm, bias)
        return x if self.final_norm["encoder"] is None else norm(x, self.final_norm["encoder"])

    def decoder(self, y: np.ndarray, sources, caches, past: int = 0, gates=None):
        """Every decoder layer on new positions ``y`` (n_new, d_model) after ``past`` cached
        ones: the output (n_new, d_model), each layer's cross-attention input (L, n_new,
        d_model) and weights (L, h, n_new, S), and the caches with the new positions."""
        bias = self.self_bias("decoder", len(y), past)
        inputs, weights, out = [], [], []
        for i, layer in enumerate(self.decoder_layers):
            y, x_in, w, cache = decoder_layer(y, layer, self.act, self.family.pre_norm,
                                              sources[i], caches[i],
                                              None if gates is None else gates[i], bias)
            inputs.append(x_in)
            weights.append(w)
            out.append(cache)
        if self.final_norm["decoder"] is not None:
            y = norm(y, self.final_norm["decoder"])
        return y, np.stack(inputs), np.stack(weights), out

    def logits(self, h: np.ndarray) -> np.ndarray:
        """``h @ lm_head.T`` (+ ``final_logits_bias``): (n, d_model) to (n, vocab)."""
        if self.config.scale_decoder_outputs:
            h = h * np.float32(self.config.d_model ** -0.5)
        if self.lm_head.dtype == np.float32:
            out = h @ self.lm_head.T                                        # (n, V)
        else:  # 16-bit storage: cast a block of rows at a time, never the whole matrix
            out = np.empty((len(h), len(self.lm_head)), dtype=np.float32)
            for r in range(0, len(self.lm_head), _LOGIT_ROWS):
                block = to_float32(self.lm_head[r:r + _LOGIT_ROWS])
                np.matmul(h, block.T, out=out[:, r:r + _LOGIT_ROWS])        # (n, rows)
        if self.final_logits_bias is not None:
            out += self.final_logits_bias
        return out

    def forward(self, src_ids, tgt_ids, *, head_mask=None, logits: bool = True) -> ForwardPass:
        """Teacher forcing: the decoder reads ``[start] + tgt_ids[:-1]`` and produces ``tgt_ids``.

        Parameters
        ----------
        src_ids, tgt_ids : sequence of int
            Token ids, as the tokenizer makes them.
        head_mask : array_like of shape (n_layers, n_heads), optional
            Gates on each decoder layer's cross-attention heads, before ``out_proj`` (0
            switches a head off): the layer's output, and all after it, change.
        logits : bool, default True
            False skips the output projection (the largest matmul) when only attention is
            wanted.

        Returns
        -------
        ForwardPass
        """
        tgt = self.check_ids(tgt_ids, "tgt_ids", self.config.decoder_vocab_size)
        gates = self.check_head_mask(head_mask)
        enc = self.encode(src_ids)                                          # (S, d_model)
        y = self.embed([self.config.decoder_start_token_id, *tgt[:-1]], "decoder")
        sources = [layer.encoder_attn.keys_values(enc) for layer in self.decoder_layers]
        y, inputs, weights, _ = self.decoder(y, sources, [None] * self.n_layers, 0, gates)
        return ForwardPass(tuple(int(i) for i in src_ids), tuple(tgt), enc, inputs, weights,
                           y, self.logits(y) if check_bool(logits, "logits") else None, gates)

    # ------------------------------------------------------------------ inside one layer
    def layer_trace(self, run: ForwardPass, layer: int, *, scale: bool = True,
                    head_mask=None) -> AttentionTrace:
        """Every intermediate of decoder layer ``layer``'s cross-attention in ``run``.

        The layer's own ``MultiHeadCrossAttention.trace`` on what it read: ``q = x W_Q + b_Q``
        (x: the layer's ``cross_inputs``), ``k``, ``v`` from the encoder output, weights
        (n_heads, n_tgt, n_src) equal to ``run.cross_attention[layer]`` (with ``scale=True``
        and the run's gates). ``scale=False`` leaves out 1/sqrt(d_head).
        """
        attn = self.cross(layer)
        if head_mask is None and run.head_mask is not None:
            head_mask = run.head_mask[layer]
        return attn.trace(run.cross_inputs[layer], run.encoder_output, head_mask=head_mask,
                          scale=check_bool(scale, "scale"))

    def layer_ablation(self, run: ForwardPass, layer: int, heads_off=()) -> AblationResult:
        """Head importance in decoder layer ``layer``'s cross-attention (Michel et al. 2019):
        the layer's ``encoder_attn`` on what it read in ``run``, heads gated before
        ``out_proj``; changes are ``||Y - Y_off|| / ||Y||`` of its output (``b_O`` included)."""
        return ablation(self.cross(layer), run.cross_inputs[layer], run.encoder_output, None,
                        heads_off)

    def cross(self, layer) -> MultiHeadCrossAttention:
        """Decoder layer ``layer``'s cross-attention (``encoder_attn``)."""
        return self.decoder_layers[check_int(layer, "layer", minimum=0,
                                             maximum=self.n_layers - 1)].encoder_attn

    # ------------------------------------------------------------------ checks
    def check_ids(self, ids, name: str, vocab: int) -> list[int]:
        """Token ids as a list of int in 0..vocab-1, 1..max_position_embeddings of them."""
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"{name} must be token ids; received a string {quote(ids)}. Use "
                            f"model.tokenizer.encode(text).")
        out = [check_int(i, f"each of {name}", minimum=0, maximum=vocab - 1) for i in ids]
        limit = self.config.max_position_embeddings
        if not 1 <= len(out) <= limit:
            raise ValueError(f"{name} must hold 1 to {limit} tokens (this model's positions); "
                             f"received {len(out)}. Give a shorter sentence.")
        return out

    def check_head_mask(self, head_mask) -> np.ndarray | None:
        if head_mask is None:
            return None
        gates = as_finite(head_mask, "head_mask", np.float32)
        if gates.shape != (self.n_layers, self.n_heads):
            raise ValueError(f"head_mask must have shape ({self.n_layers}, {self.n_heads}) "
                             f"(layers, heads); received shape {gates.shape}.")
        return gates

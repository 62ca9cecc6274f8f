"""A Marian encoder-decoder (opus-mt and the like) in NumPy: load, encode, teacher forcing.

Reads top to bottom like transformers' ``MarianMTModel``::

    encoder:  x = embed_tokens(src) * sqrt(d_model)? + positions;  x = encoder_layer(x) ...
    decoder:  y = embed_tokens([start] + tgt[:-1]) * sqrt(d_model)? + positions
              y = decoder_layer(y, encoder output) ...
    logits = y @ lm_head.T + final_logits_bias          (lm_head: the decoder's embeddings)

Row ``i`` of every output is the decoder step that *produces* target token ``i`` (its query is
the token before it). Greedy decoding with a cache is in ``xattn.marian.decode``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xattn._checks import as_finite, check_bool, check_int, quote
from xattn.ablation import AblationResult, ablation
from xattn.attention import AttentionTrace, MultiHeadCrossAttention
from xattn.decoding import decoded
from xattn.marian.config import MarianConfig, read_config
from xattn.marian.decode import decode
from xattn.marian.layers import (
    DecoderLayer,
    EncoderLayer,
    LayerNorm,
    Linear,
    activation,
    decoder_layer,
    encoder_layer,
    sinusoidal_positions,
)
from xattn.marian.tokenizer import MarianTokenizer
from xattn.marian.weights import check_tensors, embedding_names, read_tensors

__all__ = ["MarianMT", "ForwardPass"]

_LOGIT_ROWS = 8192   # lm_head rows cast from float16 at a time (not the whole matrix at once)


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


class MarianMT:
    """A Marian translation model: config, tokenizer and weights, computed in float32.

    Build it with ``MarianMT.from_folder`` (or ``xattn.marian.load_marian``, which applies the
    deployer's allow-list). Passes hold no state: one model serves any number of threads.

    Attributes
    ----------
    config : MarianConfig
    tokenizer : MarianTokenizer
    name : str
    embed_tokens_encoder, embed_tokens_decoder, lm_head : ndarray (vocab, d_model)
        The same array when tied (opus-mt).
    final_logits_bias : ndarray of shape (decoder_vocab_size,)
    encoder_layers : tuple of EncoderLayer
    decoder_layers : tuple of DecoderLayer
    """

    def __init__(self, config: MarianConfig, tokenizer: MarianTokenizer, tensors: dict, *,
                 name: str = "custom") -> None:
        check_tensors(tensors, config)
        if tokenizer.size > config.decoder_vocab_size or \
                (tokenizer.eos_id, tokenizer.pad_id) != (config.eos_token_id, config.pad_token_id):
            raise ValueError(f"vocab.json does not fit config.json: {tokenizer.size} ids, </s> = "
                             f"{tokenizer.eos_id}, <pad> = {tokenizer.pad_id}; the model has "
                             f"{config.decoder_vocab_size} ids, eos_token_id = "
                             f"{config.eos_token_id}, pad_token_id = {config.pad_token_id}.")
        self.config, self.tokenizer, self.name = config, tokenizer, name
        enc, dec, lm_head = embedding_names(config, tensors)
        self.embed_tokens_encoder, self.embed_tokens_decoder = tensors[enc], tensors[dec]
        self.lm_head = tensors[lm_head]
        self.final_logits_bias = tensors["final_logits_bias"][0]
        self.embed_scale = np.float32(np.sqrt(config.d_model) if config.scale_embedding else 1.0)
        self.act = activation(config.activation_function)
        self.encoder_layers = tuple(_layer(tensors, f"model.encoder.layers.{i}.", config)
                                    for i in range(config.encoder_layers))
        self.decoder_layers = tuple(_layer(tensors, f"model.decoder.layers.{i}.", config)
                                    for i in range(config.decoder_layers))
        self.nbytes = sum({id(a): a.nbytes for a in tensors.values()}.values())

    @classmethod
    def from_folder(cls, folder, *, dtype: str = "float32", name: str | None = None) -> MarianMT:
        """Read ``config.json``, the tokenizer and ``model.safetensors`` from ``folder``.

        ``dtype="float16"`` stores the matrices in half the memory (computed in float32).
        No allow-list here: ``xattn.marian.load_marian`` is the door for names from a link.
        """
        folder = Path(folder)
        if not folder.is_dir():
            raise ValueError(f"{quote(str(folder))} is not a folder.")
        config = read_config(folder / "config.json")
        tokenizer = MarianTokenizer.from_folder(folder)
        return cls(config, tokenizer, read_tensors(folder, dtype),
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

    # ------------------------------------------------------------------ as a Translator
    # (xattn.translator): text to ids and back, translation, attention of a pair, and the
    # capabilities only a model run here has: every layer opened, heads off, step by step.
    rescalable = True      # its layers are MultiHeadCrossAttention: the division can go

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
        """``xattn.marian.decode(self, src_ids, **kwargs)``: step by step, with forced ids."""
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
        projection ``W_Q`` (d_model, d_model), ``b_Q`` (d_model,), as float32."""
        attn = self._cross(layer)
        x = self.forward(src_ids, tgt_ids, logits=False).cross_inputs[layer]
        return x, attn.W_Q.astype(np.float32), attn.b_Q

    def decode_steps(self, src_ids, forced=()):
        """Greedy decoding step by step (``xattn.decoding.Decoded``), ``forced``: pairs
        (step, text) taken instead of the most likely token."""
        return decoded(self, src_ids, forced)

    def __repr__(self) -> str:
        c = self.config
        return (f"MarianMT(name={self.name!r}, layers={c.encoder_layers}+{c.decoder_layers}, "
                f"n_heads={self.n_heads}, d_model={c.d_model}, vocab={c.decoder_vocab_size}, "
                f"MB={self.nbytes / 1e6:.1f})")

    # ------------------------------------------------------------------ the two stacks
    def embed(self, ids, table: np.ndarray, offset: int = 0) -> np.ndarray:
        """Token vectors (scaled) plus position vectors, (n, d_model) float32."""
        x = table[ids].astype(np.float32)                                   # (n, d_model)
        x *= self.embed_scale
        x += sinusoidal_positions(len(ids), self.d_model, offset)
        return x

    def encode(self, src_ids) -> np.ndarray:
        """The encoder's output for one source sentence, (n_src, d_model)."""
        ids = self.check_ids(src_ids, "src_ids", self.config.vocab_size)
        x = self.embed(ids, self.embed_tokens_encoder)                     # (S, d_model)
        for layer in self.encoder_layers:
            x = encoder_layer(x, layer, self.act)
        return x

    def logits(self, h: np.ndarray) -> np.ndarray:
        """``h @ lm_head.T + final_logits_bias``: (n, d_model) to (n, decoder_vocab_size)."""
        if self.lm_head.dtype == np.float32:
            out = h @ self.lm_head.T                                        # (n, V)
        else:  # float16 storage: cast a block of rows at a time, never the whole matrix
            out = np.empty((len(h), len(self.lm_head)), dtype=np.float32)
            for r in range(0, len(self.lm_head), _LOGIT_ROWS):
                block = self.lm_head[r:r + _LOGIT_ROWS].astype(np.float32)
                np.matmul(h, block.T, out=out[:, r:r + _LOGIT_ROWS])        # (n, rows)
        out += self.final_logits_bias
        return out

    def forward(self, src_ids, tgt_ids, *, head_mask=None, logits: bool = True) -> ForwardPass:
        """Teacher forcing: the decoder reads ``[start] + tgt_ids[:-1]`` and produces ``tgt_ids``.

        Parameters
        ----------
        src_ids, tgt_ids : sequence of int
            Token ids, each ending with ``</s>`` as the tokenizer makes them.
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
        y = self.embed([self.config.decoder_start_token_id, *tgt[:-1]],
                       self.embed_tokens_decoder)                           # (T, d_model)
        inputs, weights = [], []
        for i, layer in enumerate(self.decoder_layers):
            y, x_in, w, _ = decoder_layer(y, layer, self.act,
                                          layer.encoder_attn.keys_values(enc), None,
                                          None if gates is None else gates[i])
            inputs.append(x_in)
            weights.append(w)
        return ForwardPass(tuple(int(i) for i in src_ids), tuple(tgt), enc, np.stack(inputs),
                           np.stack(weights), y,                            # (L, T, d), (L,H,T,S)
                           self.logits(y) if check_bool(logits, "logits") else None, gates)

    # ------------------------------------------------------------------ inside one layer
    def layer_trace(self, run: ForwardPass, layer: int, *, scale: bool = True,
                    head_mask=None) -> AttentionTrace:
        """Every intermediate of decoder layer ``layer``'s cross-attention in ``run``.

        The layer's own ``MultiHeadCrossAttention.trace`` on what it read: ``q = x W_Q + b_Q``
        (x: the layer's ``cross_inputs``), ``k``, ``v`` from the encoder output, weights
        (n_heads, n_tgt, n_src) equal to ``run.cross_attention[layer]`` (with ``scale=True``
        and the run's gates). ``scale=False`` leaves out 1/sqrt(d_head).
        """
        attn = self._cross(layer)
        if head_mask is None and run.head_mask is not None:
            head_mask = run.head_mask[layer]
        return attn.trace(run.cross_inputs[layer], run.encoder_output, head_mask=head_mask,
                          scale=check_bool(scale, "scale"))

    def layer_ablation(self, run: ForwardPass, layer: int, heads_off=()) -> AblationResult:
        """Head importance in decoder layer ``layer``'s cross-attention (Michel et al. 2019):
        the layer's ``encoder_attn`` on what it read in ``run``, heads gated before
        ``out_proj``; changes are ``||Y - Y_off|| / ||Y||`` of its output (``b_O`` included)."""
        return ablation(self._cross(layer), run.cross_inputs[layer], run.encoder_output, None,
                        heads_off)

    def _cross(self, layer) -> MultiHeadCrossAttention:
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


def _layer(t: dict, p: str, c: MarianConfig):
    """One layer's parameters from the tensors named ``p + ...``."""
    def attn(block: str, heads: int) -> MultiHeadCrossAttention:
        w = [t[f"{p}{block}.{x}_proj.weight"].T for x in ("q", "k", "v", "out")]  # (in, out)
        b = [t[f"{p}{block}.{x}_proj.bias"] for x in ("q", "k", "v", "out")]
        return MultiHeadCrossAttention.from_weights(*w, n_heads=heads, b_Q=b[0], b_K=b[1],
                                                    b_V=b[2], b_O=b[3], dtype=np.float32)

    def norm(name: str) -> LayerNorm:
        return LayerNorm(t[f"{p}{name}.weight"], t[f"{p}{name}.bias"])

    fc = [Linear(t[f"{p}fc{i}.weight"], t[f"{p}fc{i}.bias"]) for i in (1, 2)]
    if ".encoder." in p:
        return EncoderLayer(attn("self_attn", c.encoder_attention_heads),
                            norm("self_attn_layer_norm"), *fc, norm("final_layer_norm"))
    heads = c.decoder_attention_heads
    return DecoderLayer(attn("self_attn", heads), norm("self_attn_layer_norm"),
                        attn("encoder_attn", heads), norm("encoder_attn_layer_norm"), *fc,
                        norm("final_layer_norm"))

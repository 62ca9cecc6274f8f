"""An image-to-text VisionEncoderDecoder in NumPy (TrOCR's layout): a ViT or DeiT encoder and
a TrOCR text decoder with cross-attention, read from a Hugging Face folder as it is.

Reads top to bottom like transformers' ``VisionEncoderDecoderModel``::

    patches:  the conv of kernel = stride = patch_size, as a reshape and one matmul
    encoder:  x = [CLS, (distillation,) patches] + position_embeddings
              x = x + attention(layernorm_before(x));  x = x + mlp(layernorm_after(x))  ...
              x = layernorm(x);  (enc_to_dec_proj(x) when the widths differ)
    decoder:  y = embed_tokens([start] + tgt[:-1]) * sqrt(d_model)? + positions;  norm?
              y = norm(y + self_attn(y));  y = norm(y + encoder_attn(y, x));  y = norm(y + ffn(y))
    logits = y @ output_projection.T     (embed_tokens when tied)

Row ``i`` of every output is the decoder step that *produces* target token ``i``; column ``j``
of a cross-attention row is encoder position ``j`` (``patch_boxes`` gives its pixels).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xattn._checks import as_finite, check_bool, check_int, quote
from xattn._floats import to_float32
from xattn.ablation import AblationResult, ablation
from xattn.attention import AttentionTrace, MultiHeadCrossAttention
from xattn.encdec import layers
from xattn.encdec.files import present, read_text
from xattn.encdec.layers import Linear, linear, norm
from xattn.encdec.positions import fairseq_positions, learned_positions
from xattn.encdec.weights import headers, read_tensors, weight_files
from xattn.vision.config import VisionConfig, read_vision_config
from xattn.vision.image import ImageProcessing, patch_boxes, preprocess, read_processing
from xattn.vision.layers import DECODER_EPS, Tensors, act, decoder_layer, encoder_layer
from xattn.vision.weights import DEC, ENC, check_tensors

__all__ = ["ImagePass", "VisionEncoderDecoder"]

_TOKENIZER_BYTES = 32 << 20


@dataclass(frozen=True, eq=False)
class ImagePass:
    """One teacher-forced pass over an image.

    Attributes
    ----------
    tgt_ids : tuple of int
    encoder_output : ndarray of shape (n_src, d_source)
        What the cross-attention reads (after ``enc_to_dec_proj`` where there is one).
    cross_inputs : ndarray of shape (n_layers, n_tgt, d_model)
    cross_attention : ndarray of shape (n_layers, n_heads, n_tgt, n_src)
    decoder_output : ndarray of shape (n_tgt, d_model)
    logits : ndarray of shape (n_tgt, vocab_size), or None
    head_mask : ndarray of shape (n_layers, n_heads), or None
    """

    tgt_ids: tuple[int, ...]
    encoder_output: np.ndarray
    cross_inputs: np.ndarray
    cross_attention: np.ndarray
    decoder_output: np.ndarray
    logits: np.ndarray | None
    head_mask: np.ndarray | None


class VisionEncoderDecoder:
    """An image-to-text model: config, image processing, weights (memory-mapped) and, where
    the folder has ``tokenizer.json``, its tokenizer.

    Build it with ``VisionEncoderDecoder.from_folder``. Passes hold no state.

    Attributes
    ----------
    config : VisionConfig
    processing : ImageProcessing
    encoder_layers : tuple of EncoderLayer
    decoder_layers : tuple of DecoderLayer
        ``encoder_attn`` is a ``WideSourceAttention`` where the decoder reads the encoder's
        width itself (``cross_attention_hidden_size``: TrOCR-small).
    """

    def __init__(self, config: VisionConfig, tensors: dict, *, processing=None,
                 tokenizer=None, name: str = "custom") -> None:
        shapes = check_tensors({n: a.shape for n, a in tensors.items()}, config,
                               "model.safetensors")
        self.config, self.name, self.tokenizer = config, name, tokenizer
        self.processing = processing or ImageProcessing(size=config.encoder.image_size)
        e, c = config.encoder, config.decoder
        t = Tensors(tensors, shapes)
        emb = f"{ENC}embeddings."
        w = t(f"{emb}patch_embeddings.projection.weight")                 # (D, C, ph, pw)
        self.patch_embedding = Linear(w.reshape(len(w), -1),               # (D, C*ph*pw) view
                                      to_float32(t(f"{emb}patch_embeddings.projection.bias")))
        special = [t(f"{emb}cls_token")] + ([t(f"{emb}distillation_token")] if e.n_special == 2
                                           else [])
        self.special_tokens = np.concatenate([to_float32(s)[0] for s in special])  # (k, D)
        self.position_embeddings = to_float32(t(f"{emb}position_embeddings"))[0]    # (N, D)
        self.encoder_layers = tuple(encoder_layer(t, i, config)
                                    for i in range(e.num_hidden_layers))
        self.encoder_norm = t.norm(f"{ENC}layernorm", e.layer_norm_eps)
        self.enc_to_dec_proj = t.linear("enc_to_dec_proj") if config.enc_to_dec_proj else None
        self.encoder_act, self.act = act(e.hidden_act), act(c.activation_function)
        self.decoder_layers = tuple(decoder_layer(t, i, config)
                                    for i in range(c.decoder_layers))
        self.embed_tokens = t(f"{DEC}embed_tokens.weight")
        self.output_projection = self.embed_tokens if c.tie_word_embeddings else \
            t("decoder.output_projection.weight")
        self.embed_positions = t(f"{DEC}embed_positions.weight")
        self.layernorm_embedding = t.norm(f"{DEC}layernorm_embedding", DECODER_EPS) \
            if c.layernorm_embedding else None
        self.embed_scale = np.float32(np.sqrt(c.d_model) if c.scale_embedding else 1.0)
        self.nbytes = sum({id(a): a.nbytes for a in tensors.values()}.values())

    @classmethod
    def from_folder(cls, folder, *, name: str | None = None) -> VisionEncoderDecoder:
        """The model of a folder as it is: ``config.json`` (bounded JSON), the safetensors
        headers checked against it before anything is mapped, ``preprocessor_config.json``
        when present, ``tokenizer.json`` when present, then the weights, memory-mapped.

        Raises
        ------
        ValueError
            Not a folder, or a file missing, too large, of another architecture, or not
            matching another (said in one line).
        """
        folder = Path(folder)
        if not folder.is_dir():
            raise ValueError(f"{quote(str(folder))} is not a folder.")
        config = read_vision_config(folder / "config.json")
        files = weight_files(folder)
        check_tensors({n: i.shape for n, i in headers(files).items()}, config, files[0].name)
        processing = read_processing(folder / "preprocessor_config.json") \
            if present(folder / "preprocessor_config.json") else None
        tokenizer = None
        if present(folder / "tokenizer.json"):
            from tokenizers import Tokenizer
            tokenizer = Tokenizer.from_str(read_text(folder / "tokenizer.json", _TOKENIZER_BYTES))
        return cls(config, read_tensors(files), processing=processing, tokenizer=tokenizer,
                   name=str(folder) if name is None else name)

    @property
    def n_layers(self) -> int:
        return self.config.decoder.decoder_layers

    @property
    def n_heads(self) -> int:
        return self.config.decoder.decoder_attention_heads

    def __repr__(self) -> str:
        e, c = self.config.encoder, self.config.decoder
        return (f"VisionEncoderDecoder(name={self.name!r}, encoder={e.model_type} "
                f"{e.num_hidden_layers}x{e.hidden_size}, decoder=trocr {c.decoder_layers}x"
                f"{c.d_model}, n_heads={self.n_heads}, n_src={e.n_positions}, "
                f"MB={self.nbytes / 1e6:.1f})")

    # ------------------------------------------------------------------ the image side
    def pixel_values(self, image) -> np.ndarray:
        """``preprocess`` with this folder's processing: (3, height, width) float32."""
        return preprocess(image, self.processing)

    def boxes(self, image_shape) -> list:
        """Each encoder position's (x0, y0, x1, y1) in an image of ``image_shape`` (None for
        CLS and the distillation token): ``patch_boxes``."""
        e = self.config.encoder
        covered = tuple(n * p / size for n, p, size in zip(e.grid, e.patch_size, e.image_size,
                                                           strict=True))
        return patch_boxes(image_shape, e.grid, e.n_special, covered=covered)

    def check_pixels(self, pixel_values) -> np.ndarray:
        e = self.config.encoder
        x = as_finite(pixel_values, "pixel_values", np.float32)
        shape = (e.num_channels, *e.image_size)
        if x.shape != shape:
            raise ValueError(f"pixel_values must have shape {shape} (channels, height, width); "
                             f"received shape {x.shape}. Use model.pixel_values(image).")
        return x

    def embed_patches(self, pixel_values) -> np.ndarray:
        """The patch embedding (a conv of kernel = stride = patch), (n_patches, D)."""
        e = self.config.encoder
        (rows, cols), (ph, pw) = e.grid, e.patch_size
        x = self.check_pixels(pixel_values)[:, :rows * ph, :cols * pw]   # (C, rows*ph, cols*pw)
        x = x.reshape(e.num_channels, rows, ph, cols, pw)                  # (C, r, ph, c, pw)
        x = x.transpose(1, 3, 0, 2, 4).reshape(rows * cols, -1)            # (r*c, C*ph*pw)
        return linear(x, self.patch_embedding)                             # (r*c, D)

    def encode(self, pixel_values) -> np.ndarray:
        """The encoder's output as the decoder reads it, (n_src, d_source)."""
        x = np.concatenate([self.special_tokens, self.embed_patches(pixel_values)])  # (S, D)
        x += self.position_embeddings
        for layer in self.encoder_layers:
            x = layers.encoder_layer(x, layer, self.encoder_act, True)
        x = norm(x, self.encoder_norm)
        return x if self.enc_to_dec_proj is None else linear(x, self.enc_to_dec_proj)

    # ------------------------------------------------------------------ the text side
    def embed(self, ids, past: int = 0) -> np.ndarray:
        """Token vectors (scaled) plus positions, normed: (n, d_model)."""
        c = self.config.decoder
        x = to_float32(np.asarray(self.embed_tokens[ids]))                 # (n, d_model)
        if self.embed_scale != 1:
            x *= self.embed_scale
        if c.use_learned_position_embeddings:
            x += learned_positions(self.embed_positions, len(ids), past)
        else:
            x += fairseq_positions(ids, c.pad_token_id, c.d_model, past)
        return x if self.layernorm_embedding is None else norm(x, self.layernorm_embedding)

    def sources(self, enc: np.ndarray) -> list:
        """Each decoder layer's cross-attention keys and values of ``enc``, projected once."""
        return [layer.encoder_attn.keys_values(enc) for layer in self.decoder_layers]

    def decoder(self, y: np.ndarray, sources, caches, past: int = 0, gates=None):
        """Every decoder layer on new positions ``y`` (n_new, d_model) after ``past`` cached
        ones: output, cross inputs (L, n_new, d_model), weights (L, h, n_new, S), caches."""
        inputs, weights, out = [], [], []
        for i, layer in enumerate(self.decoder_layers):
            y, x_in, w, cache = layers.decoder_layer(y, layer, self.act, False, sources[i],
                                                     caches[i], None if gates is None
                                                     else gates[i])
            inputs.append(x_in)
            weights.append(w)
            out.append(cache)
        return y, np.stack(inputs), np.stack(weights), out

    def logits(self, h: np.ndarray) -> np.ndarray:
        """``h @ output_projection.T``: (n, d_model) to (n, vocab_size)."""
        return linear(h, Linear(self.output_projection, None))

    def forward(self, pixel_values, tgt_ids, *, head_mask=None, logits: bool = True) -> ImagePass:
        """Teacher forcing: the decoder reads ``[start] + tgt_ids[:-1]`` and produces
        ``tgt_ids``; ``head_mask`` (n_layers, n_heads) gates each cross-attention head."""
        c = self.config.decoder
        tgt = self.check_ids(tgt_ids)
        gates = self.check_head_mask(head_mask)
        enc = self.encode(pixel_values)                                    # (S, d_source)
        y = self.embed([c.decoder_start_token_id, *tgt[:-1]])
        y, inputs, weights, _ = self.decoder(y, self.sources(enc), [None] * self.n_layers, 0,
                                             gates)
        return ImagePass(tuple(tgt), enc, inputs, weights, y,
                         self.logits(y) if check_bool(logits, "logits") else None, gates)

    def greedy(self, pixel_values, **kwargs):
        """``xattn.vision.decode.decode(self, pixel_values, **kwargs)``."""
        from xattn.vision.decode import decode
        return decode(self, pixel_values, **kwargs)

    def detokenize(self, ids) -> str:
        """The text of ``ids`` (specials left out); needs the folder's ``tokenizer.json``."""
        if self.tokenizer is None:
            raise ValueError(f"{self.name} has no tokenizer.json: its ids cannot be read as "
                             f"text here.")
        return self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=True)

    # ------------------------------------------------------------------ inside one layer
    def cross(self, layer) -> MultiHeadCrossAttention:
        """Decoder layer ``layer``'s cross-attention (``encoder_attn``)."""
        return self.decoder_layers[check_int(layer, "layer", minimum=0,
                                             maximum=self.n_layers - 1)].encoder_attn

    def layer_trace(self, run: ImagePass, layer: int, *, scale: bool = True) -> AttentionTrace:
        """Every intermediate of decoder layer ``layer``'s cross-attention in ``run``."""
        gates = None if run.head_mask is None else run.head_mask[layer]
        return self.cross(layer).trace(run.cross_inputs[layer], run.encoder_output,
                                       head_mask=gates, scale=check_bool(scale, "scale"))

    def layer_ablation(self, run: ImagePass, layer: int, heads_off=()) -> AblationResult:
        """Head importance in decoder layer ``layer``'s cross-attention (``xattn.ablation``)."""
        return ablation(self.cross(layer), run.cross_inputs[layer], run.encoder_output, None,
                        heads_off)

    # ------------------------------------------------------------------ checks
    def check_ids(self, ids) -> list[int]:
        c = self.config.decoder
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"tgt_ids must be token ids; received a string {quote(ids)}.")
        out = [check_int(i, "each of tgt_ids", minimum=0, maximum=c.vocab_size - 1)
               for i in ids]
        if not 1 <= len(out) <= c.max_position_embeddings:
            raise ValueError(f"tgt_ids must hold 1 to {c.max_position_embeddings} tokens (this "
                             f"model's positions); received {len(out)}.")
        return out

    def check_head_mask(self, head_mask) -> np.ndarray | None:
        if head_mask is None:
            return None
        gates = as_finite(head_mask, "head_mask", np.float32)
        if gates.shape != (self.n_layers, self.n_heads):
            raise ValueError(f"head_mask must have shape ({self.n_layers}, {self.n_heads}) "
                             f"(layers, heads); received shape {gates.shape}.")
        return gates

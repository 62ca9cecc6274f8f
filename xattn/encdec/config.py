"""What an encoder-decoder computes, read from its ``config.json``: its family's row and sizes.

transformers writes one model class per family; the differences that change the numbers are
few, and each is a column of `FAMILIES` here (what the class hard-codes) or a field of
`ModelConfig` (what ``config.json`` says). One NumPy model (``xattn.encdec.model``) reads both.
The rest of a ``config.json`` (dropout, generation settings, ...) is ignored. Every field is
checked where it is read, so a wrong file fails here, not in a matmul; sizes are checked
against the weights actually present by ``xattn.encdec.weights``.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields

from xattn._checks import quote
from xattn.encdec.files import read_json
from xattn.encdec.layers import ACTIVATIONS

__all__ = ["CONFIG_BYTES", "FAMILIES", "Family", "ModelConfig", "read_config"]

CONFIG_BYTES = 1 << 20       # a config.json is a few kB


@dataclass(frozen=True)
class Family:
    """How one ``model_type`` differs (what transformers' class for it hard-codes).

    Attributes
    ----------
    model_type : str
    names : {"bart", "t5"}
        The tensors' names (``model.encoder.layers.0.self_attn.q_proj`` or
        ``encoder.block.0.layer.0.SelfAttention.q``).
    pre_norm : bool
        A norm before each block (mBART, M2M100, T5), else after (Marian, BART).
    rms_norm : bool
        T5's root-mean-square norm without bias, else LayerNorm.
    positions : {"sinusoidal", "fairseq", "learned", "relative"}
        See ``xattn.encdec.positions``.
    embedding_norm, final_norm : bool
        A norm on the embeddings (``layernorm_embedding``), and after each stack.
    logits_bias : bool
        ``final_logits_bias`` added to the logits.
    biases : bool
        Every projection has a bias (all but T5).
    frame : {"eos", "bos", "lang"}
        A sentence's ids: ``X </s>``, ``<s> X </s>``, or with a language code (``[en_XX] X
        </s>``; ``X </s> [en_XX]`` for the mBART-cc25 and legacy NLLB tokenizers).
    scaled_scores : bool
        Scores divided by sqrt(d_head) (all but T5).
    never_pad : bool
        Greedy decoding never takes ``<pad>`` (opus-mt's generation config forbids it).
    """

    model_type: str
    names: str
    pre_norm: bool
    rms_norm: bool
    positions: str
    embedding_norm: bool
    final_norm: bool
    logits_bias: bool
    biases: bool
    frame: str
    scaled_scores: bool = True
    never_pad: bool = False


FAMILIES = {f.model_type: f for f in (
    Family("marian", "bart", pre_norm=False, rms_norm=False, positions="sinusoidal",
           embedding_norm=False, final_norm=False, logits_bias=True, biases=True, frame="eos",
           never_pad=True),
    Family("bart", "bart", pre_norm=False, rms_norm=False, positions="learned",
           embedding_norm=True, final_norm=False, logits_bias=True, biases=True, frame="bos"),
    Family("mbart", "bart", pre_norm=True, rms_norm=False, positions="learned",
           embedding_norm=True, final_norm=True, logits_bias=True, biases=True, frame="lang"),
    Family("m2m_100", "bart", pre_norm=True, rms_norm=False, positions="fairseq",
           embedding_norm=False, final_norm=True, logits_bias=False, biases=True, frame="lang"),
    Family("t5", "t5", pre_norm=True, rms_norm=True, positions="relative",
           embedding_norm=False, final_norm=True, logits_bias=False, biases=False, frame="eos",
           scaled_scores=False),
)}

# config.json's names for each field where T5's differ; defaults as transformers' classes.
_T5_NAMES = {"encoder_layers": "num_layers", "decoder_layers": "num_decoder_layers",
             "encoder_attention_heads": "num_heads", "decoder_attention_heads": "num_heads",
             "encoder_ffn_dim": "d_ff", "decoder_ffn_dim": "d_ff",
             "layer_norm_eps": "layer_norm_epsilon", "max_position_embeddings": "n_positions"}
_DEFAULTS = {
    "marian": dict(activation_function="gelu", scale_embedding=False, layer_norm_eps=1e-5,
                   max_position_embeddings=1024),
    "bart": dict(activation_function="gelu", scale_embedding=False, layer_norm_eps=1e-5,
                 max_position_embeddings=1024),
    "mbart": dict(activation_function="gelu", scale_embedding=False, layer_norm_eps=1e-5,
                  max_position_embeddings=1024),
    "m2m_100": dict(activation_function="relu", scale_embedding=True, layer_norm_eps=1e-5,
                    max_position_embeddings=1024),
    "t5": dict(layer_norm_eps=1e-6, max_position_embeddings=512, pad_token_id=0,
               eos_token_id=1, relative_attention_num_buckets=32,
               relative_attention_max_distance=128),
}


@dataclass(frozen=True)
class ModelConfig:
    """The sizes and ids of one encoder-decoder (transformers' names; T5's mapped onto them).

    Attributes
    ----------
    model_type : str
        A key of ``FAMILIES``.
    vocab_size, decoder_vocab_size : int
        Rows of the encoder's and decoder's embeddings (the same but for some Marians).
    d_model, d_kv : int
        Width of the tokens, and of each head (d_model / heads but for T5).
    encoder_layers, decoder_layers, encoder_attention_heads, decoder_attention_heads : int
    encoder_ffn_dim, decoder_ffn_dim : int
    max_position_embeddings : int
        Longest sentence, in pieces, on either side.
    activation_function : str
        One of ``xattn.encdec.layers.ACTIVATIONS``.
    gated_ffn : bool
        T5 v1.1's gated feed-forward (``feed_forward_proj: "gated-gelu"``).
    scale_embedding : bool
        Token embeddings times sqrt(d_model).
    scale_decoder_outputs : bool
        T5 v1.0: the decoder's output times d_model ** -0.5 before the (tied) output layer.
    layer_norm_eps : float
    pad_token_id, eos_token_id, decoder_start_token_id : int
    forced_bos_token_id : int
        The first token of every translation (BART's ``<s>``), or -1 for none.
    relative_attention_num_buckets, relative_attention_max_distance : int
        T5's relative positions (0 elsewhere).
    """

    model_type: str
    vocab_size: int
    decoder_vocab_size: int
    d_model: int
    d_kv: int
    encoder_layers: int
    decoder_layers: int
    encoder_attention_heads: int
    decoder_attention_heads: int
    encoder_ffn_dim: int
    decoder_ffn_dim: int
    max_position_embeddings: int
    activation_function: str
    gated_ffn: bool
    scale_embedding: bool
    scale_decoder_outputs: bool
    layer_norm_eps: float
    pad_token_id: int
    eos_token_id: int
    decoder_start_token_id: int
    forced_bos_token_id: int = -1
    relative_attention_num_buckets: int = 0
    relative_attention_max_distance: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value, kind = getattr(self, f.name), {"int": int, "bool": bool, "str": str,
                                                  "float": float}[f.type]
            if type(value) is not kind and not (kind is float and type(value) is int):
                raise ValueError(f"config.json: {f.name} must be {kind.__name__}; received "
                                 f"{type(value).__name__} {quote(value)}.")
            low = -1 if f.name == "forced_bos_token_id" else 0 if f.name.endswith(
                ("_id", "_buckets", "_distance", "d_kv")) else 1
            if kind is int and value < low:
                raise ValueError(f"config.json: {f.name} must be >= {low}; received {value}.")
        if self.d_kv == 0:                      # the BART family: heads split d_model
            for side in ("encoder", "decoder"):
                heads = getattr(self, f"{side}_attention_heads")
                if self.d_model % heads:
                    raise ValueError(f"config.json: {side}_attention_heads must divide "
                                     f"d_model={self.d_model}; received {heads}.")
            object.__setattr__(self, "d_kv", self.d_model // self.decoder_attention_heads)
        if not 0 < self.layer_norm_eps < 1:
            raise ValueError(f"config.json: the norm's epsilon must be in (0, 1); received "
                             f"{self.layer_norm_eps}.")
        if self.activation_function not in ACTIVATIONS:
            raise ValueError(f"config.json: activation_function must be one of "
                             f"{', '.join(ACTIVATIONS)}; received "
                             f"{quote(self.activation_function)}.")
        for name in ("pad_token_id", "eos_token_id", "decoder_start_token_id",
                     "forced_bos_token_id"):
            if getattr(self, name) >= self.decoder_vocab_size:
                raise ValueError(f"config.json: {name} must be below decoder_vocab_size="
                                 f"{self.decoder_vocab_size}; received {getattr(self, name)}.")

    @property
    def family(self) -> Family:
        return FAMILIES[self.model_type]

    @property
    def d_head(self) -> int:
        return self.d_kv


def _value(raw: dict, key: str, default=None):
    value = raw.get(key, default)
    if isinstance(value, list) and len(value) == 1 and key.endswith("_id"):
        value = value[0]                # eos_token_id: [0] in some configs
    return default if value is None else value


def _sizes(raw: dict, model_type: str) -> dict:
    """The fields of ``ModelConfig`` from ``raw``, T5's names mapped, defaults filled in."""
    names = _T5_NAMES if model_type == "t5" else {}
    defaults = _DEFAULTS[model_type]
    out = {}
    for f in fields(ModelConfig):
        key = names.get(f.name, f.name)
        value = _value(raw, key, defaults.get(f.name))
        if value is None and f.name == "decoder_layers" and model_type == "t5":
            value = _value(raw, "num_layers")
        if value is not None:
            out[f.name] = value
    out["model_type"] = model_type
    if model_type == "t5":
        proj = str(_value(raw, "feed_forward_proj", "relu"))
        out.setdefault("d_kv", _value(raw, "d_kv", 64))
        gated, act = proj.startswith("gated-"), proj.split("-")[-1]
        out.update(gated_ffn=gated, activation_function="gelu_new" if proj == "gated-gelu"
                   else act, scale_embedding=False,
                   scale_decoder_outputs=_value(raw, "scale_decoder_outputs",
                                                raw.get("tie_word_embeddings") is not False))
    else:
        out.update(gated_ffn=False, scale_decoder_outputs=False)
        out["d_kv"] = 0                         # heads split d_model: set by ModelConfig
    if not out.get("decoder_vocab_size"):
        out["decoder_vocab_size"] = out.get("vocab_size")
    out.setdefault("decoder_start_token_id", out.get("pad_token_id"))
    out["forced_bos_token_id"] = _value(raw, "forced_bos_token_id", -1)
    return out


def read_config(path) -> ModelConfig:
    """``ModelConfig`` from a ``config.json`` (transformers' ``save_pretrained`` or a Hub
    folder's), read as untrusted input (``xattn.encdec.files``).

    Raises
    ------
    ValueError
        Not JSON, another architecture (``model_type``), a missing size, or a field of the
        wrong type or range, said in one line.
    """
    raw = read_json(path, CONFIG_BYTES)
    model_type = raw.get("model_type", "marian")
    if model_type not in FAMILIES:
        raise ValueError(f"config.json: model_type must be one of {', '.join(FAMILIES)} (the "
                         f"encoder-decoders that run here in NumPy); received "
                         f"{quote(model_type)}. Other models run through transformers where "
                         f"torch is installed.")
    values = _sizes(raw, model_type)
    missing = [f.name for f in fields(ModelConfig) if f.default is MISSING and
               f.name not in values]
    if missing:
        raise ValueError(f"config.json has no {missing[0]} (nor the name transformers gives it "
                         f"for {model_type}); it is needed to read the weights.")
    return ModelConfig(**values)

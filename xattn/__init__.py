"""xattn: multi-head cross-attention in NumPy, for teaching.

The library (maths, embedder, masks, metrics, figures) never imports streamlit; only
``xattn.ui`` does.
"""

from xattn.ablation import AblationResult, ablation
from xattn.alignment import (
    ALIGNMENT_MEASURES,
    alignment_accuracy,
    alignment_by_head,
    chance_accuracy,
)
from xattn.attention import (
    AttentionTrace,
    MultiHeadCrossAttention,
    masked_softmax,
    merge_heads,
    split_heads,
)
from xattn.attnfile import (
    AttentionFile,
    AttentionFileError,
    attention_to_bytes,
    load_attention,
    save_attention,
)
from xattn.corpus import (
    LEXICON,
    LexiconEntry,
    SentencePair,
    align,
    generate_pairs,
    sentence_words,
    translate,
    unknown_words,
)
from xattn.embedder import EMBEDDER_MODES, ToyEmbedder, sinusoidal_positions
from xattn.export import standalone_html, toolbar_config, weights_csv
from xattn.figures import average_figure, lines_figure, output_figure, per_head_figure
from xattn.masks import MASK_MODES, local_window_mask, padding_mask, wait_k_mask
from xattn.metrics import (
    MEASURE_DESCRIPTIONS,
    confidence,
    diagonal_alignment,
    effective_keys,
    entropy,
    head_statistics,
    monotonicity,
    normalised_entropy,
)
from xattn.subwords import hide_sinks, merge_words, sink_columns, word_groups
from xattn.tokenize import TOKENIZER_MODES, tokenize
from xattn.train import TrainConfig, TrainResult, embed_pair, train

__all__ = [
    # the attention module
    "AttentionTrace", "MultiHeadCrossAttention", "masked_softmax", "merge_heads", "split_heads",
    # tokens to vectors, masks
    "EMBEDDER_MODES", "TOKENIZER_MODES", "ToyEmbedder", "sinusoidal_positions", "tokenize",
    "MASK_MODES", "local_window_mask", "padding_mask", "wait_k_mask",
    # per-head measures and ablation
    "MEASURE_DESCRIPTIONS", "AblationResult", "ablation", "confidence", "diagonal_alignment",
    "effective_keys", "entropy", "head_statistics", "monotonicity", "normalised_entropy",
    # figures and export
    "average_figure", "lines_figure", "output_figure", "per_head_figure", "standalone_html",
    "toolbar_config", "weights_csv",
    # attention arrays from anywhere: the .npz format, subwords to words, attention sinks
    "AttentionFile", "AttentionFileError", "attention_to_bytes", "load_attention",
    "save_attention", "hide_sinks", "merge_words", "sink_columns", "word_groups",
    # toy translation task and training
    "LEXICON", "LexiconEntry", "SentencePair", "align", "generate_pairs", "sentence_words",
    "translate", "unknown_words", "ALIGNMENT_MEASURES", "TrainConfig", "TrainResult",
    "alignment_accuracy", "alignment_by_head", "chance_accuracy", "embed_pair", "train",
]
__version__ = "0.1.0"

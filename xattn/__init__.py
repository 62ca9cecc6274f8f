"""xattn: multi-head cross-attention in NumPy, for teaching.

The library (maths, embedder, masks, metrics, figures) never imports streamlit; only
``xattn.ui`` does.
"""

from xattn.attention import AttentionTrace, MultiHeadCrossAttention
from xattn.embedder import EMBEDDER_MODES, ToyEmbedder, sinusoidal_positions
from xattn.masks import MASK_MODES, local_window_mask, padding_mask, wait_k_mask
from xattn.tokenize import TOKENIZER_MODES, tokenize

__all__ = [
    "AttentionTrace",
    "EMBEDDER_MODES",
    "MASK_MODES",
    "MultiHeadCrossAttention",
    "TOKENIZER_MODES",
    "ToyEmbedder",
    "local_window_mask",
    "padding_mask",
    "sinusoidal_positions",
    "tokenize",
    "wait_k_mask",
]
__version__ = "0.1.0"

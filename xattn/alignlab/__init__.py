"""The alignment lab: which layer and head of a model aligns words, measured as AER.

Gold alignments come from the toy corpus (``gold_from_pair``) or a file (``read_gold``:
Pharaoh or NAACL, indexing and side order given explicitly, ``indexing_warnings`` for the
one-based trap; special tokens such as ``</s>`` are not words: ``unscored_specials``,
``leave_out``). A head's weights become links (``links``: argmax per target word, per source
word, their intersection, or a threshold), scored by the alignment error rate with precision
and recall (``link_counts``, ``rates``, ``aer``). ``score_heads`` does it for every layer and
head of a model over many sentence pairs; ``class_score`` scores a class's votes (each link's
share, the majority alignment) the same way. ``PUBLISHED_AER`` and ``PUBLISHED_FINDINGS`` hold
published results, to show as references and never as measurements.

Examples
--------
>>> from xattn.alignlab import read_gold, score_heads
>>> import numpy as np
>>> gold = read_gold("1-1 2-3 3-2\\n", format="pharaoh", first_index=1, order="src-tgt")
>>> w = np.array([[[[.8, .1, .1], [.1, .1, .8], [.2, .6, .2]]]])   # (1, 1, n_tgt, n_src)
>>> scores = score_heads([(w, gold.pairs[0])])
>>> float(scores.aer[0, 0]), float(scores.precision[0, 0]), float(scores.recall[0, 0])
(0.0, 1.0, 1.0)
"""

from xattn.alignlab.gold import (
    GoldFile,
    GoldLinks,
    gold_from_pair,
    indexing_warnings,
    unscored_specials,
)
from xattn.alignlab.goldfile import (
    FORMATS,
    MAX_GOLD_BYTES,
    MAX_GOLD_PAIRS,
    MAX_POSITION,
    ORDERS,
    GoldFileError,
    read_gold,
)
from xattn.alignlab.links import (
    COUNTS,
    METHOD_DESCRIPTIONS,
    METHODS,
    aer,
    link_counts,
    links,
    rates,
)
from xattn.alignlab.references import (
    PUBLISHED_AER,
    PUBLISHED_FINDINGS,
    REFERENCE_LABEL,
    PublishedAER,
    PublishedFinding,
)
from xattn.alignlab.score import LabScores, score_heads, toy_examples
from xattn.alignlab.specials import leave_out, special_positions
from xattn.alignlab.votes import (
    ClassScore,
    LinkScore,
    class_score,
    link_shares,
    links_matrix,
    majority_links,
    score_links,
)

__all__ = [
    # gold alignments
    "FORMATS", "ORDERS", "MAX_GOLD_BYTES", "MAX_GOLD_PAIRS", "MAX_POSITION", "GoldFile",
    "GoldFileError", "GoldLinks", "gold_from_pair", "indexing_warnings", "read_gold",
    # special tokens: scored only where the gold links them
    "special_positions", "unscored_specials", "leave_out",
    # links and the error rate
    "COUNTS", "METHODS", "METHOD_DESCRIPTIONS", "aer", "link_counts", "links", "rates",
    # a model's layers and heads
    "LabScores", "score_heads", "toy_examples",
    # a class's votes: each link's share, the majority alignment, scored as the heads are
    "LinkScore", "ClassScore", "links_matrix", "link_shares", "majority_links", "score_links",
    "class_score",
    # published references
    "REFERENCE_LABEL", "PublishedAER", "PublishedFinding", "PUBLISHED_AER", "PUBLISHED_FINDINGS",
]

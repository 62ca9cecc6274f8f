"""The built-in computed questions a lesson step may ask, by name: one table.

Each `Computed` question reads the weights on screen and returns a ``Told`` (its words, the
answer, the prediction and its truth, the charts that answer it); a lesson file names one in
a step's ``[step.question]`` (``computed = "strongest_source"``) with its arguments
(``target = "chat"``). The table says what each question needs of the weights (keys of
``xattn.lesson.NEEDS``), its arguments with their types and defaults, and, for arguments
whose default is a setting of the step's own page (the seed a step starts from), which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xattn.lesson import aligns, media, probe, switched, tell
from xattn.lesson._distractors import FINDERS, with_distractors

__all__ = ["Computed", "COMPUTED", "Arg"]


@dataclass(frozen=True)
class Arg:
    """One argument of a computed question: its type (``str``, ``int`` or ``float``), its
    default, what it is, the smallest value a number takes, the setting of the step's page
    its default comes from (``""``: none) and, for a text, the values it may take (empty:
    any)."""

    kind: type
    default: object
    about: str
    minimum: int | float | None = None
    page: str = ""
    choices: tuple = ()


@dataclass(frozen=True)
class Computed:
    """A computed question: ``tell(a, layer, **args)`` and what it needs."""

    name: str
    tell: Callable
    about: str
    needs: tuple[str, ...] = ()
    args: dict[str, Arg] = field(default_factory=dict)
    media: str = ""          # "image" or "audio": asked only on such a model's page

    def __post_init__(self):
        if self.name in FINDERS:      # its Told carries the distractors of named misconceptions
            object.__setattr__(self, "tell", with_distractors(self.tell, FINDERS[self.name]))

    def __repr__(self) -> str:
        return f"Computed({self.name!r})"


_TARGET = "the target word asked about (the first target token where the sentence lacks it)"
COMPUTED: dict[str, Computed] = {c.name: c for c in (
    Computed("strongest_source", tell.one_head,
             "Which source word does a target word look at most in one head? (token)",
             args={"target": Arg(str, "chat", _TARGET),
                   "head": Arg(int, 1, "the head asked about, from 1", 1)}),
    Computed("row_sum", tell.rows_sum,
             "What does one row of one head add up to? (number)",
             args={"target": Arg(str, "noir", _TARGET),
                   "head": Arg(int, 2, "the head asked about, from 1", 1)}),
    Computed("masked_share", tell.padding,
             "What weight does a masked source token get? (number; a padding mask)",
             needs=("mask", "unmasked"), args={"target": Arg(str, "chat", _TARGET)}),
    Computed("wait_k", tell.wait_k,
             "Which source tokens may the first target token see? (choice; a wait-k mask)",
             needs=("mask",)),
    Computed("seed_change", tell.seed,
             "Do random weights' patterns stay when the seed changes? (choice)",
             needs=("variant",),
             args={"seed": Arg(int, 0, "the seed compared with the next one", 0, "seed")}),
    Computed("repeated_word", tell.trained,
             "Which source word does a repeated target word look at? (token; trained "
             "weights)", needs=("gold",),
             args={"word": Arg(str, "le", "the repeated target word")}),
    Computed("trained_vs_random", tell.training,
             "Which gives each target word one clear source word: trained or random? "
             "(choice)", needs=("untrained",)),
    Computed("head_off", switched.ablation,
             "Which head's removal changes the output most? (choice)", needs=("ablate",)),
    Computed("divide_by_sqrt", switched.sqrt,
             "What happens to a row's entropy without the division by √d_head? (choice)",
             needs=("rescale",)),
    Computed("best_layer", tell.layers,
             "Which layer's heads, averaged, align words best on held-out sentences? "
             "(choice)", needs=("heldout",),
             args={"links": Arg(str, "target_argmax", "how weights become links (as the "
                                "Alignment view's `links`)", page="links",
                                choices=tuple(tell.LINK_RULES)),
                   "link_min": Arg(float, 0.3, "the threshold, for links = \"threshold\"",
                                   0.01, "link_min")}),
    Computed("first_to_learn", tell.learning,
             "Which head starts aligning first during training? (choice; trained weights)",
             needs=("timelapse",)),
    Computed("head_jobs", probe.jobs,
             "What is the job of each head of a layer? (parts)"),
    Computed("masking_effect", probe.explanation,
             "Which source word, masked, changes a target word's probability most? (token; "
             "a translation model)", needs=("effects",),
             args={"target": Arg(str, "chat", _TARGET)}),
    Computed("align_words", aligns.aligns,
             "Link each target word to the source word it translates. (links)",
             needs=("pair_gold",)),
    Computed("tap_letter", media.tap_letter,
             "Tap where an image model reads one of the tokens it wrote (tap; an image "
             "model's page)", needs=("image",), media="image",
             args={"letter": Arg(int, 3, "the output token asked about, from 1", 1)}),
    Computed("timing_head", media.timing_head,
             "Which head tells time? (head; a speech model's page, the built-in clip)",
             needs=("timing",), media="audio"),
    Computed("tap_time", media.tap_time,
             "Tap when a speech model hears one of the words it wrote (tap_time; a speech "
             "model's page, the built-in clip)", needs=("audio",), media="audio",
             args={"word": Arg(int, 3, "the word asked about, from 1 (among the text tokens "
                               "written)", 1),
                   "head": Arg(int, 2, "the head of the page's layer whose peak is the truth, "
                               "from 1", 1)}),
)}

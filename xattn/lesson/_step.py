"""A lesson step, what it needs of the weights, and what it tells about the weights on screen.

A `Step` is a prepared page (its URL parameters), a paragraph, one thing to look at and one
question; its ``tell`` function reads the weights on screen and returns a `Told`: the words
that fill the step's text («target» becomes the token asked about), the answer, the prediction
the class makes before seeing the numbers (a ``xattn.classroom.Question``) and its truth. So
the text, the question and the answer always agree with the page, whatever the sentences, the
seed or the number of heads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from xattn.classroom.kinds import KINDS, own_kinds
from xattn.classroom.question import Question
from xattn.lesson._told import Told
from xattn.lesson.aligns import word_pair
from xattn.lesson.charts import head_chart
from xattn.literal import md_code
from xattn.sources import Attention
from xattn.words import N_, say, sentences

__all__ = ["Step", "Ask", "Own", "OWN_KINDS", "NEEDS", "needed", "missing", "off_plan",
           "verdict", "is_right"]

# What a step may need of the weights: (has it?, what the step shows instead, in one line: a
# msgid of the lesson catalogs, said in the reader's language by `needed`).
NEEDS: dict[str, tuple[Callable[[Attention], bool], str]] = {
    "mask": (lambda a: a.mask is not None,
             N_("these weights do not say which cells were masked (a file), so the answer cannot "
             "name them: choose *Weights: random* in the sidebar.")),
    "unmasked": (lambda a: a.recipe is not None and a.recipe.unmasked is not None,
                 N_("only random weights take a mask you choose: choose *Weights: random* and "
                 "*Masking: padding* in the sidebar, and mask a source token.")),
    "variant": (lambda a: a.recipe is not None,
                N_("only random weights come from a seed you can change (trained weights are "
                "trained from theirs: compare training seeds in the sidebar): choose "
                "*Weights: random*.")),
    "gold": (lambda a: a.gold is not None,
             N_("only the toy task's trained weights come with a gold alignment: choose "
             "*Weights: trained*.")),
    "untrained": (lambda a: a.toy is not None and a.toy.untrained is not None,
                  N_("only the toy task's trained weights have a random start to compare with: "
                  "choose *Weights: trained*.")),
    "ablate": (lambda a: a.layers is not None and a.layers.ablate is not None,
               N_("switching heads off needs the heads' outputs and W_O, which these weights do "
               "not have: choose *Weights: random* or *trained*.")),
    "rescale": (lambda a: a.layers is not None and a.layers.rescalable,
                N_("these weights' division by √d_head cannot be switched off here: choose "
                "*Weights: random*.")),
    "heldout": (lambda a: a.heldout is not None,
                N_("only weights that can run on the toy corpus's held-out sentences can be "
                "scored against its gold alignment: choose *Weights: model* (the shipped "
                "toy-en-fr) or *trained*.")),
    "timelapse": (lambda a: a.toy is not None and a.toy.timelapse is not None,
                  N_("only the toy task's trained weights keep snapshots of their training: "
                  "choose *Weights: trained*.")),
    "pair_gold": (lambda a: word_pair(a) is not None,
                  N_("only a sentence pair of the toy task (its words on both sides, at most 16 "
                  "each) has a gold alignment to score the class and the heads against: choose "
                  "*Weights: model* (the shipped toy-en-fr) or *trained*, with whole words.")),
    "effects": (lambda a: a.translation is not None and a.translation.effects is not None,
                N_("only a translation model run here in NumPy produces a next word whose "
                "probability can be measured with a source word masked: choose *Weights: "
                "model* (the shipped toy-en-fr), with *Hide sink tokens* off.")),
    "image": (lambda a: getattr(a.media, "kind", None) == "image",
              N_("only an image model's page has an image to tap: choose *Weights: model* and an "
              "image model (docs/audio-images.md).")),
    "audio": (lambda a: getattr(a.media, "kind", None) == "audio",
              N_("only a speech model's page has a clip to tap a moment of: choose *Weights: "
              "model* and a speech model (docs/audio-images.md).")),
    "timing": (lambda a: getattr(a.media, "kind", None) == "audio" and bool(a.media.words),
               N_("only a speech model's page on the built-in clip knows when each word is said: "
               "choose *Weights: model* and a speech model (docs/audio-images.md).")),
}
_FIELD = re.compile("«([a-z_]+)»")
OWN_KINDS = own_kinds()      # the built-in kinds a lesson file asks (Kind.own: all of them)


@dataclass(frozen=True)
class Own:
    """A lecturer's own question (a lesson file's ``kind = "choice"``): its kind, the one
    line the class predicts (``prompt``), the options (choice, poll) or range (number), the
    right answer (None: a poll), the answer's words, and the head and layer its chart shows
    (from 1; 0: the step's)."""

    kind: str
    prompt: str
    options: tuple[str, ...] = ()
    answer: object = None
    explain: str = ""
    low: float = 0.0
    high: float = 1.0
    decimals: int = 2
    tolerance: float = 0.005
    head: int = 1
    layer: int = 0

    def question(self) -> Question:
        if KINDS[self.kind].number:
            return Question(self.kind, low=self.low, high=self.high, decimals=self.decimals)
        return Question(self.kind, self.options)

    def tell(self, a: Attention, layer: int) -> Told:
        """The question on the weights ``a`` (its chart: the head it names, on its layer)."""
        if self.layer:
            layer = min(self.layer, a.n_layers) - 1
        head = min(self.head, a.n_heads) - 1
        shown = f"{float(self.answer):g}" if KINDS[self.kind].number else self.answer
        said = "" if self.answer is None else say("**The answer: {answer}**.",
                                                  answer=md_code(shown))
        words = self.explain or (say("A poll: there is no right answer; here is how the "
                                     "class answered.") if self.answer is None else "")
        return Told({}, sentences(words.strip(), said), self.prompt, self.question(), self.answer,
                    tolerance=self.tolerance, layer=layer, head=head,
                    charts=(head_chart(a, layer, head),))


@dataclass(frozen=True)
class Ask:
    """How a step's question is made: a computed question (``computed``, a name of
    ``xattn.lesson.computed.COMPUTED``, with its ``args``), or the lecturer's own (``own``)."""

    computed: str = ""
    args: tuple = ()                 # (name, value) pairs
    own: Own | None = None


@dataclass(frozen=True)
class Step:
    """One step of a lesson.

    Attributes
    ----------
    title : str
    state : dict of str to value
        URL parameters of the prepared page (the rest at their defaults); ``view`` is the view
        drawn beside the step.
    text, look, question : str
        Markdown with «fields» that the question fills: one paragraph, one thing to look at,
        the question for the class, as the projector shows it.
    ask : Ask, optional
        How the question is made; None: a step the class reads, with nothing to predict.
    chart : str
        A key of ``xattn.lesson.charts.CHARTS`` drawn beside the answer instead of the
        question's own charts ("": the question's).
    line : int
        The step's line in its lesson file (0: none).
    case : int
        0: the step as written; from 1, the same question on a new case
        (``xattn.lesson.followup``): its question carries the case's number.
    case_what : str
        What the new case changed, in words (plain text).
    check : str
        ``"pre"`` or ``"post"``: the step asked again before or after the lesson, as its
        pre/post check (``xattn.lesson.lessonfile``); "" for the lesson's own steps.
    of_step : int
        A check's step: the lesson's own step it asks again (from 1).
    """

    title: str
    state: dict = field(default_factory=dict)
    text: str = ""
    look: str = ""
    question: str = ""
    ask: Ask | None = None
    chart: str = ""
    line: int = 0
    case: int = 0
    case_what: str = ""
    check: str = ""
    of_step: int = 0

    @property
    def computed(self):
        """The computed question (``xattn.lesson.computed.Computed``) or None."""
        from xattn.lesson.computed import COMPUTED

        return COMPUTED[self.ask.computed] if self.ask and self.ask.computed else None

    def on_page(self, settings: dict) -> Step:
        """The step with each argument whose default is a page setting (``Arg.page``: the
        link rule of step 10) taken from ``settings`` (page key: value) where it holds one:
        the answer then follows what the page draws (issue 44, F6)."""
        computed = self.computed
        if computed is None:
            return self
        args = dict(self.ask.args)
        for name, arg in computed.args.items():
            if arg.page and settings.get(arg.page) is not None:
                args[name] = arg.kind(settings[arg.page])
        changed = tuple(sorted(args.items()))
        return self if changed == self.ask.args else replace(
            self, ask=Ask(self.ask.computed, changed))

    @property
    def needs(self) -> tuple[str, ...]:
        """Keys of `NEEDS`: what the question needs of the weights."""
        computed = self.computed
        return computed.needs if computed is not None else ()

    def tell(self, a: Attention, layer: int) -> Told:
        """What the step tells about the weights ``a`` on ``layer`` (from 0)."""
        if self.ask is None:
            told = Told({}, "", layer=layer)
        elif self.ask.own is not None:
            told = self.ask.own.tell(a, layer)
        else:
            told = self.computed.tell(a, layer, **dict(self.ask.args))
        if self.chart:
            from xattn.lesson.charts import named_charts

            head = told.head if told.head is not None else 0
            where = told.layer if told.layer is not None else layer
            told = replace(told, charts=named_charts(self.chart, a, where, head))
        if self.case and told.question is not None:
            told = replace(told, question=replace(told.question, case=self.case),
                           note=sentences(say("The same question on a new case: {case}.",
                                              case=md_code(self.case_what)), told.note))
        return told

    def render(self, told: Told | None) -> tuple[str, str, str]:
        """The step's text, what to look at and its question with their «fields» filled (from
        ``told``; without one, each field reads as its name)."""
        words = told.words if told is not None else {}

        def fill(text: str) -> str:
            return _FIELD.sub(lambda m: words.get(m.group(1), m.group(1).replace("_", " ")),
                              text)
        return fill(self.text), fill(self.look), fill(self.question)

    def layer(self, n_layers: int) -> int:
        """The layer (from 0) the step's prepared page shows of weights with ``n_layers``:
        its ``layer`` setting (from 1), else the page's default; what a room asks about."""
        from xattn.sources import default_layer

        wanted = self.state.get("layer", default_layer(n_layers))
        return min(max(int(wanted), 1), n_layers) - 1

    def __repr__(self) -> str:
        return f"Step({self.title!r})"


def needed(step: Step, a: Attention) -> str | None:
    """What ``step`` needs that ``a`` lacks, and what to choose instead (Markdown, one
    clause of `NEEDS`, in the context's language), or None when ``a`` has it all."""
    for need in step.needs:
        has, why = NEEDS[need]
        if not has(a):
            return say(why)
    return None


def missing(step: Step, a: Attention) -> str | None:
    """Why ``a`` cannot give what ``step`` needs (Markdown, one line, in the context's
    language), or None."""
    why = needed(step, a)
    return None if why is None else say("This step's answer needs other weights: {why}",
                                        why=why)


# What a step's text describes (its own weights), and what is on screen, in words.
PLANNED = {"random": N_("random weights"), "trained": N_("the toy task's trained weights"),
           "model": N_("the translation model trained on the toy task")}
ON_SCREEN = {"random": N_("random weights"), "trained": N_("the toy task's trained weights"),
             "model": N_("a model"), "file": N_("weights read from a file")}


def off_plan(step: Step, a: Attention) -> str | None:
    """Markdown in the context's language (``xattn.words.speaking``), when the weights on
    screen cannot give what ``step`` needs (a link that kept its own settings): the step's
    paragraph describes the step's own weights, not the ones drawn below. None when the
    weights fit the step."""
    if missing(step, a) is None:
        return None
    planned = PLANNED[step.state.get("weights", "random")]
    shown = ON_SCREEN[a.source]
    if planned == shown:
        return say("**Not this step's setting.** The step is written for {planned} with its "
                   "own settings; this link keeps settings of its own and shows {shown}, so the "
                   "paragraph below describes the step's setting, not the charts beside it.",
                   planned=say(planned), shown=say(shown))
    return say("**Not this step's setting.** The step is written for {planned}; this link keeps "
               "settings of its own and shows {shown}, so the paragraph below describes the "
               "step's setting, not the charts beside it.", planned=say(planned),
               shown=say(shown))


def verdict(told: Told, answer) -> str:
    """A student's prediction ``answer`` against the truth, in one line of Markdown: right, or
    what the page shows and how far off (several parts: how many are right; links: their
    AER against the gold links; a poll: that it has no right answer). The question's kind
    decides (``xattn.classroom.kinds``); a wrong answer that a named misconception gives
    says which (``xattn.lesson.misconceptions``)."""
    from xattn.lesson.misconceptions import misconception_of

    line = told.question.of.verdict(told.question, told.key, answer)
    slip = misconception_of(told, answer)
    return sentences(line, say("It is the answer of a known slip, **{name}**: {why}.",
                               name=slip.name, why=slip.why) if slip is not None else "")


def is_right(told: Told, answer) -> bool:
    """Whether a whole answer is right: the truth or a tie; every part right (or a close
    call); the gold links exactly; a number within the tolerance; never for a poll."""
    return told.question.of.right(told.question, told.key, answer)

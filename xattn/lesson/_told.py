"""What a lesson step tells about the weights on screen: a `Told`, and the `Part` of a step
that asks several predictions at once.

A step's ``tell`` function (``xattn.lesson._step.Step``) reads the weights and returns a
`Told`: the words that fill the step's text, the answer, the prediction the class makes
before seeing the numbers (a ``xattn.classroom.Question``) and its truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xattn.classroom.kinds import Key
from xattn.classroom.question import Question

__all__ = ["Told", "Part"]


@dataclass(frozen=True)
class Part:
    """One of several predictions a step asks at once (each head's job): its name, the
    question (as a room would store it), the right answer and any just as right (a close
    call)."""

    name: str
    question: Question
    truth: object
    also: tuple = ()


@dataclass(frozen=True)
class Told:
    """What a step says about the weights on screen.

    Attributes
    ----------
    words : dict of str to str
        Markdown that fills the step's «fields» (``{"target": "`chat`"}``).
    answer : str
        Markdown: the answer, computed from the numbers.
    prompt : str
        Markdown: what the class predicts, in one line ("" when nothing is asked).
    question : Question, optional
        The prediction's kind and accepted answers.
    truth : optional
        The right prediction: a choice's text, a token's position, a number, each part's
        choice (a tuple), or the gold ``(target, source)`` links (a sorted tuple).
    note : str
        Markdown: how the page differs from the step's plan ("There is no *chat* here ...").
    tolerance : float
        A number prediction within this of the truth is right.
    tokens : tuple of str
        A token question's tokens as typed (its choices name repeated words with their place).
    row : (int, int), optional
        A token question's target row and head (-1: the heads averaged): where the class's
        taps are compared with the weights.
    also : tuple
        Other predictions that are just as right (a tie: two layers align equally well).
    parts : tuple of Part
        Several predictions at once, one per head say: ``question`` is then a ``"parts"``
        question (one row per part) and ``truth`` each part's truth in order.
    charts : tuple of xattn.lesson.charts.Chart
        The charts that answer the question (drawn with it, after the prediction, on the
        lecturer's page and every phone): the head, layer or curve it is about.
    layer : int, optional
        The layer (from 0) the question is about.
    head : int, optional
        The head (from 0) the question is about; -1: the heads averaged; None: no one head.
    page : dict
        Settings the view beside the step takes for this question (``{"dstep": 3}``: the
        decoder step of the target word asked about).
    distractors : tuple of xattn.lesson.misconceptions.Distractor
        The wrong answers named misconceptions give on the same weights (a computed choice,
        token or number question; ``xattn.lesson._distractors``).
    weights : tuple of float
        A token question's row of weights, one per token (what a student's surprise is
        measured by: the weight of their pick against the answer's).
    shown : tuple of str
        A choice question's options as the context's language says them ("tête 2" for the
        value "head 2"), one per choice; () when they read as their values. The values
        (what a phone sends, the store counts and the CSV holds) stay the same in every
        language.
    """

    words: dict
    answer: str
    prompt: str = ""
    question: Question | None = None
    truth: object = None
    note: str = ""
    tolerance: float = 0.005
    tokens: tuple = ()
    row: tuple[int, int] | None = None
    also: tuple = ()
    parts: tuple[Part, ...] = ()
    charts: tuple = ()
    layer: int | None = None
    head: int | None = None
    page: dict = field(default_factory=dict)
    distractors: tuple = ()
    weights: tuple = ()
    shown: tuple = ()

    @property
    def also_right(self) -> tuple:
        """What is just as right: a tie's answers, or each part's close calls."""
        return tuple(p.also for p in self.parts) if self.parts else self.also

    @property
    def key(self) -> Key:
        """What an answer is checked against (``xattn.classroom.kinds.Key``)."""
        return Key(self.truth, self.also, self.tolerance, self.tokens,
                   tuple((p.name, p.truth, p.also) for p in self.parts), self.weights)

"""A lesson step's prepared page, computed apart from any page: the weights a class's room
asks about, and the question of every step on them.

A room's questions are made when it opens (``lesson_questions``), and each student's page
draws the same step on the same weights (``xattn.live.answers.class_step``), so both read
``prepared_attention``: the step's own settings (its lesson file's ``[step.page]``),
everything else at its default, as the lecturer's page opens the step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xattn.classroom import NO_QUESTION, Question
from xattn.lesson import Lesson, Step, needed
from xattn.literal import md_code
from xattn.live.compute import cached_run
from xattn.live.link import REGISTRY, parse_label
from xattn.live.training import Progress, obtain
from xattn.pairs import Problem, read_pair
from xattn.pipeline import Settings
from xattn.sources import Attention, random_attention, trained_attention
from xattn.train import TrainConfig

__all__ = ["prepared_attention", "lesson_questions", "StepUnavailable", "Shown"]


class StepUnavailable(ValueError):
    """A step's prepared page cannot be made (a model that does not load, a sentence its
    weights do not take): the step says so in one line."""


@dataclass(frozen=True)
class Shown:
    """How a page shows a step's weights being made (``xattn/ui/lesson/start.py`` makes one of
    Streamlit's status box and slots): ``model(name)`` loads a model while showing it (the
    model, or why it cannot be loaded: ``xattn.live.models.loaded_model``); ``training()``
    the `Progress` a training draws in. None instead of a `Shown`: nothing is shown (the
    server's own threads)."""

    model: Callable[[str], object]
    training: Callable[[], Progress]


def _get(step: Step, key: str):
    return step.state.get(key, REGISTRY[key].default)


def prepared_attention(step: Step, *, shown: Shown | None = None) -> Attention:
    """The weights of ``step``'s prepared page (its own settings, everything else default):
    what a class's room asks about before the host opens the step. ``shown``: how a page's run
    shows a model loading or a training's progress (None: the server's own threads, where
    there is no page to show it on). `StepUnavailable` when they cannot be made."""
    weights = _get(step, "weights")
    try:
        if weights == "model":
            return _model(step, shown)
        if weights == "trained":
            return _trained(step, shown)
        if weights == "file":
            raise StepUnavailable("a lesson step cannot use uploaded weights: every phone "
                                  "computes the step from its settings; choose random, "
                                  "trained or model weights")
        settings = Settings(src=_get(step, "src"), tgt=_get(step, "tgt"),
                            d_model=_get(step, "d_model"), n_heads=_get(step, "heads"),
                            seed=_get(step, "seed"), tokenizer=_get(step, "tok"),
                            embedder=_get(step, "emb"), positional=_get(step, "pos"),
                            mask_mode=_get(step, "mask"), wait_k=_get(step, "k"),
                            window=_get(step, "window"),
                            padded=tuple(parse_label(p)[0] for p in _get(step, "pad")))
        return random_attention(cached_run(settings), cached_run)
    except StepUnavailable:
        raise
    except (ValueError, TypeError) as err:
        raise StepUnavailable(str(err)) from None


def _model(step: Step, shown: Shown | None) -> Attention:
    from xattn.backends import offered_models
    from xattn.encdec import SHIPPED_MODEL
    from xattn.live.models import TOY_PAIR, attention_of, example_attention, loaded_model
    from xattn.media import media_kind
    from xattn.sources import model_attention

    name = _get(step, "model") or offered_models()[0]
    if name not in offered_models():
        raise StepUnavailable(f"the model {md_code(name)} is not on this server's list "
                              "(XATTN_MODELS, docs/models.md)")
    model = loaded_model(name) if shown is None else shown.model(name)
    if isinstance(model, str):
        raise StepUnavailable(f"the model {md_code(name)} cannot be used: {model}")
    kind = media_kind(name)
    if kind is not None:               # a speech or image model: on its built-in example
        return example_attention(model, kind, name)
    # The page's own defaults (``model_source``): for the shipped model its toy pair, whose
    # empty target means "the model translates", also when only the source is set; a room,
    # homework or Moodle file must ask about the translation the projector shows (issue 44,
    # G3: it asked about the random page's default French sentence).
    if name == SHIPPED_MODEL:
        src = step.state.get("src", TOY_PAIR[0])
        tgt = step.state.get("tgt", TOY_PAIR[1]) or None
    else:
        src, tgt = _get(step, "src"), _get(step, "tgt") or None
    return model_attention(attention_of(model, src, tgt, _get(step, "words")),
                           hide_sinks=_get(step, "sinks"), loaded=model)


def _trained(step: Step, shown: Shown | None) -> Attention:
    config = TrainConfig(n_heads=_get(step, "tr_heads"), steps=_get(step, "tr_steps"),
                         seed=_get(step, "tr_seed"))
    run, _ = obtain(config, None if shown is None else shown.training())
    pair = read_pair(_get(step, "tr_src"), _get(step, "tr_tgt"))
    if isinstance(pair, Problem):                       # said in its own words
        raise StepUnavailable(pair.message)
    return trained_attention(run, pair)


def lesson_questions(lesson: Lesson, shown: Shown | None = None
                     ) -> tuple[list[Question], list[str]]:
    """The question of every step of ``lesson`` on its prepared page, for a new room, and
    one line (Markdown) for each step that cannot run (then no room should start).
    ``shown``: how a page shows the models loading and the trainings (`prepared_attention`)."""
    questions, problems = [], []
    for n, step in enumerate(lesson.steps, 1):
        try:
            a = prepared_attention(step, shown=shown)
            why = needed(step, a)
            if why:
                raise StepUnavailable(why)
            questions.append(step.tell(a, step.layer(a.n_layers)).question or NO_QUESTION)
        except StepUnavailable as err:
            where = f" (line {step.line})" if step.line else ""
            problems.append(f"Step {n}{where}, {md_code(step.title)}: {err}")
    return questions, problems

"""The same question on a new case: an isomorphic follow-up (Smith et al. 2009).

After a step's reveal the lecturer can ask its question again on a new case: another seed,
another sentence pair of the toy task, another head, layer, mask or link rule. Its answer is
computed as the step's is, from the new case's weights, so nobody writes it by hand; the
lecturer's page picks the first case whose answer differs from the step's own
(``xattn.live.answers.follow_up``), so that a class that only remembered the first answer
does not get it right. "Differs" is by answer, not by position (`differs`): a token in
another sentence is the same answer when it is the same word (``cat`` again, "the second
``the``" again), and a case whose page cannot show what it names (layer 3 of a 2-layer
model, `shows_case`) does not exist. A step with no such case has no follow-up.

`cases` lists a step's candidate cases in a fixed order (the same in every process: a room
keeps only the case's number, ``Question.case``), and `case_step` is the step on one of them.
A lecturer's own question has no cases: its answer is not computed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from xattn.classroom.question import MAX_CASES
from xattn.lesson._step import Ask, Step

__all__ = ["Case", "cases", "case_step", "differs", "shows_case", "MAX_CASES"]


@dataclass(frozen=True)
class Case:
    """One new case of a step: settings of its page and arguments of its question that
    change, and what changed, in words (plain text)."""

    page: tuple = ()           # (key, value) pairs
    args: tuple = ()
    what: str = ""


def _toy_sentences() -> tuple:
    """Sentence pairs of the toy task (``xattn.corpus``) in a fixed order."""
    from xattn.corpus import generate_pairs

    return tuple(generate_pairs(160, seed=5))


@cache
def _pairs(word: str | None = None, twice: bool = False) -> tuple:
    """Toy pairs whose French side has ``word`` (``twice``: at least twice), as text."""
    out = []
    for p in _toy_sentences():
        n = p.target.count(word) if word else 1
        if n >= (2 if twice else 1):
            out.append((" ".join(p.source), " ".join(p.target)))
    return tuple(dict.fromkeys(out))


def _seeds(key: str, base: int) -> list[Case]:
    what = {"seed": "seed", "tr_seed": "training seed"}[key]
    return [Case(page=((key, s),), what=f"{what} {s} instead of {base}")
            for s in range(base + 1, base + 1 + MAX_CASES)]


def _sentences(step: Step, pairs, keys=("src", "tgt")) -> list[Case]:
    own = (step.state.get(keys[0]), step.state.get(keys[1]))
    return [Case(page=((keys[0], src), (keys[1], tgt)), what=f"the pair “{src}” → “{tgt}”")
            for src, tgt in pairs if (src, tgt) != own][:MAX_CASES]


def cases(step: Step) -> tuple[Case, ...]:
    """The step's candidate new cases, in order (at most `MAX_CASES`); none for a step with no
    computed question."""
    computed = step.computed
    if computed is None:
        return ()
    page, args = step.state, dict(step.ask.args)
    weights = page.get("weights", "random")
    name = computed.name
    if name == "seed_change":
        base = args.get("seed", 0)
        found = [Case(args=(("seed", s),), what=f"seeds {s} and {s + 1} instead of {base} and "
                                                f"{base + 1}")
                 for s in range(base + 1, base + 1 + MAX_CASES)]
    elif name == "wait_k":
        k = page.get("k", 3)
        found = [Case(page=(("k", v),), what=f"k = {v} instead of {k}") for v in range(1, 8)
                 if v != k]
    elif name == "head_jobs":
        layer = page.get("layer", 0)
        found = [Case(page=(("layer", v),), what=f"layer {v}") for v in range(1, 7)
                 if v != layer]               # layers the model lacks: `shows_case` drops
    elif name == "best_layer":
        from xattn.lesson.tell import LINK_RULES

        rule = args.get("links", "target_argmax")
        found = [Case(args=(("links", r),), what=f"links: {LINK_RULES[r]}")
                 for r in LINK_RULES if r != rule]
    elif weights == "random":
        found = _seeds("seed", page.get("seed", 0))
    elif weights == "trained" and name in ("trained_vs_random", "first_to_learn", "head_off"):
        found = _seeds("tr_seed", page.get("tr_seed", 0))
    elif weights == "trained":
        word = args.get("word")
        found = _sentences(step, _pairs(word, twice=True) if word else _pairs(),
                           ("tr_src", "tr_tgt"))
    elif weights == "model" and page.get("model", "toy-en-fr") in ("", "toy-en-fr"):
        found = _sentences(step, _pairs(args.get("target")))
    elif "head" in args:
        head = args["head"]
        found = [Case(args=(("head", h),), what=f"head {h} instead of {head}")
                 for h in range(1, 9) if h != head]
    else:
        found = []
    return tuple(found[:MAX_CASES])


def case_step(step: Step, case: int) -> Step:
    """``step`` on its new case ``case`` (from 1; 0: the step itself); ValueError for a case
    it does not have."""
    if case == 0:
        return step
    found = cases(step)
    if not 1 <= case <= len(found):
        raise ValueError(f"step {step.title!r} has {len(found)} new cases; received case "
                         f"{case}.")
    c = found[case - 1]
    args = {**dict(step.ask.args), **dict(c.args)}
    # An argument whose default is a page setting (step 5's seed, step 10's link rule) sets
    # that setting too: the lecturer's page then draws the new case, not the old one.
    specs = step.computed.args if step.computed is not None else {}
    shown = {specs[k].page: v for k, v in dict(c.args).items() if k in specs and specs[k].page}
    return replace(step, state={**step.state, **shown, **dict(c.page)},
                   ask=Ask(step.ask.computed, tuple(sorted(args.items()))), case=case,
                   case_what=c.what)


def differs(first, then) -> bool:
    """Whether ``then`` (a new case's Told) has an answer that ``first``'s right answer would
    get wrong: another number (beyond twice the tolerance), another word (not another place
    of the same word), another choice, or another job for some head: the kind decides
    (``Kind.differs``, ``xattn.classroom.measures``)."""
    if then.question is None or first.question is None or then.truth is None:
        return False
    return then.question.of.differs(first.question, first.key, then.question, then.key)


def shows_case(step: Step, case: int, told) -> bool:
    """Whether the new case ``case`` of ``step`` shows what it names: a case that changes the
    layer must get that layer (a 2-layer model has no layer 3; the page would show layer 2
    under the case's name)."""
    if case == 0:
        return True
    page = dict(cases(step)[case - 1].page)
    return "layer" not in page or told.layer is None or told.layer + 1 == int(page["layer"])

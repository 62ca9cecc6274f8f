"""The two steps that test what attention tells: each head's job (``jobs``), and whether the
word a head looks at is the word the output needs (``explanation``). Every number comes from
the library (``xattn.jobs``, ``xattn.encdec.effects``) on the weights on screen; the words
are said in the context's language (``xattn.words``), the tokens as they are."""

from __future__ import annotations

import numpy as np

from xattn.classroom.question import Question
from xattn.jobs import CLOSE, JOBS, head_jobs
from xattn.lesson._numbers import cost, pair, three
from xattn.lesson._told import Part, Told
from xattn.lesson._words import number_word, target_row, token_label, token_name
from xattn.lesson.charts import Chart, heads_chart
from xattn.words import listed, number, say, say_n, sentences

__all__ = ["jobs", "explanation"]


def _signed(value: float | None) -> str:
    """A score as the table shows it: two decimals, a true minus sign, "–" when unknown."""
    return "–" if value is None else number(value, ".2f").replace("-", "−")


def _measured_on(basis) -> str:
    """Which sentences the measures were taken on, and what follows for the labels."""
    words = say_n("{n} target word", "{n} target words", basis.n_words)
    if basis.held_out:
        return say("Measured on the {n} held-out sentences ({words}), not on the pair on "
                   "screen: the labels are the same whatever sentence is shown.",
                   n=basis.n_pairs, words=words)
    if basis.gold_in_place is not None:
        return say("Measured on the pair on screen and its gold alignment ({words}): these "
                   "weights cannot run on other sentences, so the labels may change with the "
                   "sentence.", words=words)
    return say("Measured on the pair on screen ({words}): these weights cannot run on other "
               "sentences, so the labels may change with the sentence.", words=words)


def _rule(found) -> str:
    """How each score is computed, with this basis's numbers, and the rule that picks a job."""
    basis = found[0].basis
    rule = say("Each score is 0 for a head without the job and 1 for the job on every word. "
               "**sink** = (share on `</s>` and punctuation − {even:.2f}) / (1 − {even:.2f}), "
               "{even:.2f} being that share for a head spread evenly; **spread out** = the "
               "mean normalised entropy of a row (1 = spread evenly). A head's offset is where "
               "its brightest cell (`</s>` counted as a column) most often lies from the "
               "word's own place (the source word at the same relative place; −1 = the word "
               "before)", even=float(found[0].sink_uniform))
    if basis.gold_in_place is None:
        return rule + say(". No gold alignment here, so aligning cannot be told from "
                          "position: **aligns words** is unknown (–) and **follows position** "
                          "is the share of words whose brightest cell is at the offset.")
    return rule + say(". {share:.1f} % of these words have their gold word in their own place. "
                      "On the words whose gold word is *not* at the head's offset (the *tell* "
                      "column), **follows position** = the share whose brightest cell is at "
                      "the offset and **aligns words** = the share on the gold word: a head "
                      "doing only the other job scores 0 there. Where no word tells them "
                      "apart, aligns words is unknown (–).",
                      share=100 * float(basis.gold_in_place))


def _table(a, layer: int, found) -> list[str]:
    """The measures of each head, one row each (Markdown)."""
    where = say("layer {layer}, ", layer=layer + 1) if a.n_layers > 1 else ""
    rows = [say("| {where}head | sink | spread | offset | tell | follows position | aligns "
                "words | job |", where=where), "|---|---|---|---|---|---|---|---|"]
    for j in found:
        job = sentences(f"**{j.job}**", say("(close: {jobs})", jobs=listed(j.close))
                        if j.close else "")
        rows.append(f"| {j.name} | {_signed(j.scores['sink'])} | {_signed(j.spread)} | "
                    + f"{j.offset:+d}".replace("-", "−") + f" | {j.n_tell or '–'} | "
                    f"{_signed(j.scores['follows position'])} | "
                    f"{_signed(j.scores['aligns words'])} | {job} |")
    return rows


def jobs(a, layer: int) -> Told:
    """Label each head: the measures decide (``xattn.jobs``), on the sentences it says. The
    jobs keep their names (the options a phone taps) in every language."""
    found = head_jobs(a, layer)
    parts = tuple(Part(j.name, Question("choice", JOBS), j.job, j.close) for j in found)
    question = Question("parts", JOBS, rows=tuple(j.name for j in found))
    counts = {job: sum(j.job == job for j in found) for job in JOBS}
    summary = listed(f"{number(n)} {job}" for job, n in counts.items() if n)
    where = say("layer {layer}", layer=layer + 1) if a.n_layers > 1 else say("these weights")
    n = len(found)
    heads = (say("the head") if n <= 1 else
             say_n("the first {word} head", "the first {word} heads", n, word=number_word(n))
             if n < a.n_heads else
             say_n("the {word} head", "the {word} heads", n, word=number_word(n)))
    chosen = say("The job is the largest of the four scores; one within {close} of it is a "
                 "close call, right too. Here: {summary}. The labels simplify: most heads do a "
                 "bit of each.", close=CLOSE, summary=summary)
    return Told({"layer": where, "heads": heads},
                _measured_on(found[0].basis) + "\n\n" + "\n".join(_table(a, layer, found))
                + "\n\n" + sentences(_rule(found), chosen),
                say("Label each head's job."), question, tuple(j.job for j in found),
                parts=parts, layer=layer, charts=(heads_chart(a, layer),))


def _where(effects, layer: int) -> tuple[int, int]:
    """The source word the layer's heads look at most, and the one whose masking matters
    most."""
    return int(np.argmax(effects.attention[layer].mean(axis=0))), int(np.argmax(effects.drop))


def _heads_line(e, off: tuple, on: tuple, word: str) -> str:
    """Heads switched off one at a time: which matters most, beside the one that looks
    hardest at the word the output needs, and whether any single head carries it."""
    def name(lh: tuple) -> str:
        return say("layer {layer}, head {head}", layer=int(lh[0]) + 1, head=int(lh[1]) + 1)

    most, needed = float(e.head_drop[off]), float(e.drop.max())
    looks = float(e.attention[on + (int(np.argmax(e.drop)),)])
    text = (say("Heads switched off one at a time: {off} matters most (switching it off "
                "{cost}), and it is the head that looks hardest at {word} ({weight:.2f}).",
                off=name(off), cost=cost(most), word=word, weight=looks) if off == on else
            say("Heads switched off one at a time: {off} matters most (switching it off "
                "{cost}); the head that looks hardest at {word} is {on} ({weight:.2f}), and "
                "switching it off {cost_on}.", off=name(off), cost=cost(most), word=word,
                on=name(on), weight=looks, cost_on=cost(e.head_drop[on])))
    if most < needed / 2:
        text = sentences(text, say("No single head carries {word} to the output: masking the word "
                          "costs {needed}, any one head at most {most}; the others make up "
                          "for it.", word=word, needed=three(needed), most=three(most)))
    return text


def explanation(a, layer: int, *, target: str = "chat") -> Told:
    """Which source word, masked from the cross-attention, changes the target word most;
    beside where attention looks (``xattn.encdec.effects``)."""
    from xattn.figures.effects import effects_figure, head_effects_figure

    i, note = target_row(a, target)
    e = a.translation.effects(i)
    src, last = e.src_words, e.attention.shape[0] - 1
    looked, needed = _where(e, last)
    name = token_name(a.tgt_tokens, i)
    weight = e.attention[last].mean(axis=0)
    off = np.unravel_index(int(np.argmax(e.head_drop)), e.head_drop.shape)
    on_needed = np.unravel_index(int(np.argmax(e.attention[..., needed])), e.head_drop.shape)
    agree = looked == needed
    where = (say("Layer {layer}'s heads, averaged, also put most weight on it ({weight:.2f}).",
                 layer=last + 1, weight=float(weight[needed])) if agree else
             say("Layer {layer}'s heads, averaged, put most weight on {looked} ({weight:.2f}; "
                 "{needed} gets {other:.2f}).", layer=last + 1, looked=token_name(src, looked),
                 weight=float(weight[looked]), needed=token_name(src, needed),
                 other=float(weight[needed])))
    before, after = pair(e.p, e.masked[needed])
    costs = (say("Masked from the cross-attention (every layer), {needed} costs {target} the "
                 "most: its probability falls from {before} to {after}.",
                 needed=token_name(src, needed), target=name, before=before, after=after)
             if e.drop[needed] >= 0.0005 else
             say("Masked from the cross-attention (every layer), no source word changes "
                 "{target}'s probability ({p:.3f}) at 3 decimals; {needed} changes it most "
                 "(from {before} to {after}).", target=name, p=float(e.p),
                 needed=token_name(src, needed), before=before, after=after))
    lines = [
        sentences(costs, where),
        (say("**They agree here**, on this word: a heavy weight can still be one of several "
             "routes to the output, so agreement is no proof either.") if agree else
         say("**They disagree**: the heaviest weight is on {looked}, but masking it {cost}. "
             "Where a head looks is not what the output needs (Jain and Wallace 2019; "
             "Wiegreffe and Pinter 2019 argue when attention can still be read as one "
             "explanation among others).", looked=token_name(src, looked),
             cost=cost(e.drop[looked], only=True))),
        _heads_line(e, off, on_needed, token_name(src, needed))]
    labels = tuple(token_label(src, j) for j in range(len(src)))

    def effects_alt(lang: str) -> str:
        from xattn.figures.words import chart_words

        return chart_words(lang)("Bar chart comparing the attention weights of layer {l} with "
                                 "the measured effect of masking each source word.", l=last + 1)

    def heads_alt(lang: str) -> str:
        from xattn.figures.words import chart_words

        return chart_words(lang)("Bar chart of the measured effect of switching each head off.")

    charts = (Chart(("effects", i, last), effects_alt("en"),
                    lambda scale, lang="en": effects_figure(e, last, font_scale=scale,
                                                           lang=lang), effects_alt),
              Chart(("head effects", i), heads_alt("en"),
                    lambda scale, lang="en": head_effects_figure(e, font_scale=scale, lang=lang),
                    heads_alt))
    return Told({"target": name},
                " ".join(lines[:1]) + "\n\n" + "\n\n".join(lines[1:]),
                say("Tap the source word whose masking will change {target} most.",
                    target=name),
                Question("token", labels), needed, note, tokens=tuple(src), row=(i, -1),
                charts=charts, layer=last, head=-1, page={"dstep": i})

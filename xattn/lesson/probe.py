"""The two steps that test what attention tells: each head's job (``jobs``), and whether the
word a head looks at is the word the output needs (``explanation``). Every number comes from
the library (``xattn.jobs``, ``xattn.encdec.effects``) on the weights on screen."""

from __future__ import annotations

import numpy as np

from xattn.classroom.question import Question
from xattn.jobs import CLOSE, JOBS, head_jobs
from xattn.lesson._numbers import cost, pair, three
from xattn.lesson._told import Part, Told
from xattn.lesson._words import number_word, target_row, token_label, token_name
from xattn.lesson.charts import Chart, heads_chart

__all__ = ["jobs", "explanation"]


def _signed(value: float | None) -> str:
    """A score as the table shows it: two decimals, a true minus sign, "–" when unknown."""
    return "–" if value is None else f"{value:.2f}".replace("-", "−")


def _measured_on(basis) -> str:
    """Which sentences the measures were taken on, and what follows for the labels."""
    words = f"{basis.n_words:,} target word" + ("" if basis.n_words == 1 else "s")
    if basis.held_out:
        return (f"Measured on the {basis.n_pairs} held-out sentences ({words}), not on the "
                "pair on screen: the labels are the same whatever sentence is shown.")
    gold = " and its gold alignment" if basis.gold_in_place is not None else ""
    return (f"Measured on the pair on screen{gold} ({words}): these weights cannot run on "
            "other sentences, so the labels may change with the sentence.")


def _rule(found) -> str:
    """How each score is computed, with this basis's numbers, and the rule that picks a job."""
    basis = found[0].basis
    rule = ("Each score is 0 for a head without the job and 1 for the job on every word. "
            f"**sink** = (share on `</s>` and punctuation − {found[0].sink_uniform:.2f}) / "
            f"(1 − {found[0].sink_uniform:.2f}), {found[0].sink_uniform:.2f} being that share "
            "for a head spread evenly; **spread out** = the mean normalised entropy of a row "
            "(1 = spread evenly). A head's offset is where its brightest cell (`</s>` counted "
            "as a column) most often lies from the word's own place (the source word at the "
            "same relative place; −1 = the word before)")
    if basis.gold_in_place is None:
        return rule + (". No gold alignment here, so aligning cannot be told from position: "
                       "**aligns words** is unknown (–) and **follows position** is the "
                       "share of words whose brightest cell is at the offset.")
    b = f"{100 * basis.gold_in_place:.1f} %"
    return rule + (f". {b} of these words have their gold word in their own place. On the "
                   "words whose gold word is *not* at the head's offset (the *tell* column), "
                   "**follows position** = the share whose brightest cell is at the offset "
                   "and **aligns words** = the share on the gold word: a head doing only the "
                   "other job scores 0 there. Where no word tells them apart, aligns words is "
                   "unknown (–).")


def jobs(a, layer: int) -> Told:
    """Label each head: the measures decide (``xattn.jobs``), on the sentences it says."""
    found = head_jobs(a, layer)
    parts = tuple(Part(j.name, Question("choice", JOBS), j.job, j.close) for j in found)
    question = Question("parts", JOBS, rows=tuple(j.name for j in found))
    rows = [f"| {'layer ' + str(layer + 1) + ', ' if a.n_layers > 1 else ''}head | sink | "
            "spread | offset | tell | follows position | aligns words | job |",
            "|---|---|---|---|---|---|---|---|"]
    rows += [f"| {j.name} | {_signed(j.scores['sink'])} | {j.spread:.2f} | "
             f"{j.offset:+d}".replace("-", "−") + f" | {j.n_tell or '–'} | "
             f"{_signed(j.scores['follows position'])} | {_signed(j.scores['aligns words'])} | "
             f"**{j.job}**" + (f" (close: {', '.join(j.close)})" if j.close else "") + " |"
             for j in found]
    counts = {job: sum(j.job == job for j in found) for job in JOBS}
    summary = ", ".join(f"{n} {job}" for job, n in counts.items() if n)
    where = f"layer {layer + 1}" if a.n_layers > 1 else "these weights"
    first = "first " if len(found) < a.n_heads else ""
    return Told({"layer": where, "heads": f"the {first}{number_word(len(found))} heads"
                 if len(found) > 1 else "the head"},
                _measured_on(found[0].basis) + "\n\n" + "\n".join(rows) + "\n\n"
                + _rule(found) + f" The job is the largest of the four scores; one within "
                f"{CLOSE} of it is a close call, right too. Here: {summary}. The labels "
                "simplify: most heads do a bit of each.",
                "Label each head's job.", question, tuple(j.job for j in found),
                parts=parts, layer=layer, charts=(heads_chart(a, layer),))


def _where(effects, layer: int) -> tuple[int, int]:
    """The source word the layer's heads look at most, and the one whose masking matters
    most."""
    return int(np.argmax(effects.attention[layer].mean(axis=0))), int(np.argmax(effects.drop))


def _heads_line(e, off: tuple, on: tuple, word: str) -> str:
    """Heads switched off one at a time: which matters most, beside the one that looks
    hardest at the word the output needs, and whether any single head carries it."""
    def name(lh: tuple) -> str:
        return f"layer {lh[0] + 1}, head {lh[1] + 1}"

    most, needed = float(e.head_drop[off]), float(e.drop.max())
    text = (f"Heads switched off one at a time: {name(off)} matters most (switching it off "
            f"{cost(most)})" + (
                f", and it is the head that looks hardest at {word} "
                f"({e.attention[on + (int(np.argmax(e.drop)),)]:.2f})" if off == on else
                f"; the head that looks hardest at {word} is {name(on)} "
                f"({e.attention[on + (int(np.argmax(e.drop)),)]:.2f}), and switching it off "
                f"{cost(e.head_drop[on])}") + ".")
    if most < needed / 2:
        text += (f" No single head carries {word} to the output: masking the word costs "
                 f"{three(needed)}, any one head at most {three(most)}; the others make up "
                 "for it.")
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
    where = (f"Layer {last + 1}'s heads, averaged, also put most weight on it "
             f"({weight[needed]:.2f})." if agree else
             f"Layer {last + 1}'s heads, averaged, put most weight on "
             f"{token_name(src, looked)} ({weight[looked]:.2f}; {token_name(src, needed)} gets "
             f"{weight[needed]:.2f}).")
    before, after = pair(e.p, e.masked[needed])
    lines = [
        (f"Masked from the cross-attention (every layer), {token_name(src, needed)} costs "
         f"{name} the most: its probability falls from {before} to {after}. "
         if e.drop[needed] >= 0.0005 else
         f"Masked from the cross-attention (every layer), no source word changes {name}'s "
         f"probability ({e.p:.3f}) at 3 decimals; {token_name(src, needed)} changes it most "
         f"(from {before} to {after}). ") + where,
        ("**They agree here**, on this word: a heavy weight can still be one of several routes "
         "to the output, so agreement is no proof either." if agree else
         f"**They disagree**: the heaviest weight is on {token_name(src, looked)}, but "
         f"masking it {cost(e.drop[looked]).replace('costs', 'costs only')}. Where a head "
         "looks is not what the "
         "output needs (Jain and Wallace 2019; Wiegreffe and Pinter 2019 argue when attention "
         "can still be read as one explanation among others)."),
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
                f"Tap the source word whose masking will change {name} most.",
                Question("token", labels), needed, note, tokens=tuple(src), row=(i, -1),
                charts=charts, layer=last, head=-1, page={"dstep": i})

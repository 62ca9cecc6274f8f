"""The default lesson's last computed answers in the phone's language (issue 45): which head
learns first, each head's job, whether attention is the explanation, the image and clip
questions, every distractor's own reason and the choices built from numbers (*head 2*).

Each answer is rendered in French and Arabic and compared with the catalog's sentence filled
with numbers recomputed here from the weights (not the numbers the code printed in English),
written as the language writes them; the tokens are byte for byte the English answer's, and
a choice's value (what a phone sends, the store counts, the CSV holds) is the English one.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from test_lesson import attention, shipped_attention, trained_attention_of

from xattn.words import number, speaking, translated

LANGS = ("fr", "ar")
_FIELD = re.compile(r"\{([a-z_]+)(?::([^{}]*))?\}")
_CODE = re.compile(r"`[^`]+`")


def fill(lang: str, msgid: str, **values) -> str:
    """``msgid``'s translation in ``lang`` from its catalog, its numbers written as ``lang``
    writes them (``xattn.words.number``) and its texts as they are."""
    text = translated(msgid, lang)
    assert text and text != msgid, (lang, msgid)

    def put(m):
        value = values[m.group(1)]
        return value if isinstance(value, str) else number(value, m.group(2) or "", lang)
    return _FIELD.sub(put, text)


def told_in(lang: str, tell, *args, **kwargs):
    with speaking(lang):
        return tell(*args, **kwargs)


def named(tokens, j: int) -> str:
    """Token ``j`` as an answer names it: a code span, its place when the word repeats."""
    return f"`{tokens[j]}`" + (f" ({j})" if list(tokens).count(tokens[j]) > 1 else "")


def digits(before: float, after: float) -> int:
    """The decimals (3 to 8) at which two probabilities read apart, neither read as 0 unless
    it is (as ``xattn.lesson._numbers.pair`` promises)."""
    for d in range(3, 9):
        a, b = f"{before:.{d}f}", f"{after:.{d}f}"
        if a != b and all(float(t) != 0 or x == 0 for t, x in ((a, before), (b, after))):
            return d
    return 8


def same_tokens(said: str, english: str) -> None:
    assert sorted(_CODE.findall(said)) == sorted(_CODE.findall(english))


# --- which head learns first (first_to_learn) -------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_the_first_head_to_learn_is_said_with_the_timelapses_own_numbers(trained, lang):
    from xattn.lesson.tell import learning

    a = trained_attention_of(trained)
    tl = a.toy.timelapse()
    onset = [int(s) for s in tl.onset(0.5)]
    step = min(s for s in onset if s >= 0)
    heads = [h for h, s in enumerate(onset) if s == step]
    k = int(np.searchsorted(tl.steps, step))
    moved = float(tl.by_head["moved_accuracy"][k, heads[0]])
    repeated = float(tl.by_head["repeated_accuracy"][k, heads[0]])
    cue = ("meaning" if moved > repeated + 0.1 else "position" if repeated > moved + 0.1
           else "meaning and position alike")
    every = int(tl.steps[1] - tl.steps[0])
    with speaking(lang):
        from xattn.words import say_n
        snapshots = say_n("snapshots every {n} step", "snapshots every {n} steps", every)
    said = dict(step=step, every=snapshots, head=heads[0] + 1, cue=translated(cue, lang),
                moved=moved, repeated=repeated)
    reach = (fill(lang, "**Head {head}** reaches half of the held-out words first: by the "
                        "snapshot at step {step} ({every}), head {head} by {cue} (moved words "
                        "{moved:.0%}, repeated words {repeated:.0%}).", **said)
             if len(heads) == 1 else
             fill(lang, "**Heads {heads}** (together) reach half of the held-out words first: "
                        "by the snapshot at step {step} ({every}), head {head} by {cue} "
                        "(moved words {moved:.0%}, repeated words {repeated:.0%}).",
                  heads=", ".join(str(h + 1) for h in heads), **said))
    told, english = told_in(lang, learning, a, 0), learning(a, 0)
    assert told.answer == reach + " " + translated(
        "Heads do not learn together: one finds a cue, the others follow or specialise in "
        "another.", lang)
    assert told.prompt == translated("Which head will start aligning first?", lang)
    # the choices: the values stay English, the options are said in the language
    assert told.question == english.question and told.truth == f"head {heads[0] + 1}"
    assert told.shown == tuple(fill(lang, "head {head}", head=h + 1) for h in range(len(onset)))
    assert english.shown == english.question.choices


# --- each head's job (head_jobs) ----------------------------------------------------------------
@pytest.fixture(scope="module")
def shipped():
    return shipped_attention()


@pytest.mark.parametrize("lang", LANGS)
def test_each_heads_job_is_said_with_the_measures_numbers(shipped, lang):
    from xattn.jobs import head_jobs
    from xattn.lesson.probe import jobs

    a, layer = shipped, 1
    found = head_jobs(a, layer)
    basis = found[0].basis
    told, english = told_in(lang, jobs, a, layer), jobs(a, layer)
    with speaking(lang):
        from xattn.words import say_n
        words = say_n("{n} target word", "{n} target words", basis.n_words)
    assert told.answer.startswith(fill(
        lang, "Measured on the {n} held-out sentences ({words}), not on the pair on screen: "
              "the labels are the same whatever sentence is shown.", n=basis.n_pairs,
        words=words))
    header = fill(lang, "| {where}head | sink | spread | offset | tell | follows position | "
                        "aligns words | job |", where=fill(lang, "layer {layer}, ",
                                                           layer=layer + 1))
    assert header in told.answer.splitlines()
    rows = [line for line in told.answer.splitlines() if line.startswith("| head ")]
    assert len(rows) == len(found) == a.n_heads
    for row, j in zip(rows, found, strict=True):        # each score, as the language writes it
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == number(j.scores["sink"], ".2f", lang).replace("-", "−")
        assert cells[2] == number(j.spread, ".2f", lang)
        assert cells[-1].startswith(f"**{j.job}**")         # the job keeps its name (a choice)
    share = 100 * basis.gold_in_place
    assert fill(lang, ". {share:.1f} % of these words have their gold word in their own "
                      "place. On the words whose gold word is *not* at the head's offset (the "
                      "*tell* column), **follows position** = the share whose brightest cell "
                      "is at the offset and **aligns words** = the share on the gold word: a "
                      "head doing only the other job scores 0 there. Where no word tells them "
                      "apart, aligns words is unknown (–).", share=share) in told.answer
    assert told.prompt == translated("Label each head's job.", lang)
    assert told.words["layer"] == fill(lang, "layer {layer}", layer=2)
    assert told.truth == english.truth and told.question == english.question
    same_tokens(told.answer, english.answer)


# --- is attention the explanation (masking_effect) --------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_is_attention_the_explanation_is_said_with_the_probabilities_it_measured(shipped,
                                                                                 lang):
    from xattn.lesson.probe import explanation

    a = shipped
    i = a.tgt_tokens.index("chat")
    e = a.translation.effects(i)
    needed = int(np.argmax(e.drop))
    told, english = told_in(lang, explanation, a, 0), explanation(a, 0)
    name, word = named(a.tgt_tokens, i), named(e.src_words, needed)
    if e.drop[needed] >= 0.0005:
        # the two probabilities at three decimals (or more where three would read alike)
        d = digits(float(e.p), float(e.masked[needed]))
        first = fill(lang, "Masked from the cross-attention (every layer), {needed} costs "
                           "{target} the most: its probability falls from {before} to {after}.",
                     needed=word, target=name, before=number(float(e.p), f".{d}f", lang),
                     after=number(float(e.masked[needed]), f".{d}f", lang))
        assert told.answer.startswith(first), (told.answer, first)
    looked = int(np.argmax(e.attention[-1].mean(axis=0)))
    if looked == needed:
        assert translated("**They agree here**, on this word: a heavy weight can still be one "
                          "of several routes to the output, so agreement is no proof either.",
                          lang) in told.answer
    else:
        assert fill(lang, "Layer {layer}'s heads, averaged, put most weight on {looked} "
                          "({weight:.2f}; {needed} gets {other:.2f}).",
                    layer=e.attention.shape[0], looked=named(e.src_words, looked),
                    weight=float(e.attention[-1].mean(axis=0)[looked]), needed=word,
                    other=float(e.attention[-1].mean(axis=0)[needed])) in told.answer
    assert told.prompt == fill(lang, "Tap the source word whose masking will change {target} "
                                     "most.", target=name)
    assert told.truth == english.truth == needed and told.tokens == english.tokens
    same_tokens(told.answer, english.answer)


# --- the image and the clip -------------------------------------------------------------------
@pytest.fixture
def media_steps(whisper_dir, vision_dir, monkeypatch):
    """The example lesson's three media steps' weights, on the tiny folders."""
    from test_media_lesson import EXAMPLE

    from xattn.lesson import read_lesson
    from xattn.live.answers import class_step
    from xattn.live.link import lesson_setting

    monkeypatch.setenv("XATTN_MODELS", f"{whisper_dir},{vision_dir}")
    text = EXAMPLE.read_text().replace('"toy-reader"', json.dumps(vision_dir)).replace(
        '"toy-digits"', json.dumps(whisper_dir))
    lesson = read_lesson(text, "media", page=lesson_setting)
    return [class_step(lesson, n)[0] for n in (1, 2, 3)]


@pytest.mark.usefixtures("fresh_cache")
def test_the_image_and_clip_questions_are_said_with_the_weights_numbers(media_steps):
    from xattn.lesson import media
    from xattn.speech.alignment import head_timing

    image, timing, clip = media_steps
    for lang in LANGS:
        # the image: the last layer's heads averaged over the patches, for output token 3
        w = image.layer(image.n_layers - 1)[:, 2, 1:].mean(0).reshape(image.media.grid)
        r, c = np.unravel_index(int(np.argmax(w)), w.shape)
        told = told_in(lang, media.tap_letter, image, 0, letter=3)
        token = named(image.tgt_tokens, 2)
        assert told.answer == fill(
            lang, "Writing {token}, the last layer's heads (averaged) look most at the patch in "
                  "row {row}, column {col} (weight {weight:.3f} of the patches' {total:.3f}).",
            token=token, row=int(r) + 1, col=int(c) + 1, weight=float(w[r, c]),
            total=float(w.sum()))
        assert told.prompt == fill(
            lang, "Tap where the model reads {token} (output token {i}): the peak of layer "
                  "{layer}'s heads averaged; within one patch counts.", token=token, i=3,
            layer=image.n_layers)
        assert told.truth == (r, c)
        # which head tells time: each head's timing F1 at 100 ms
        f1 = head_timing(timing.weights, 0.02, timing.media.words,
                         rows=timing.media.text_rows)[:, :, 1]
        told = told_in(lang, media.timing_head, timing, 0)
        for lyr, h in np.ndindex(f1.shape):
            assert f"L{lyr + 1} H{h + 1} {number(float(f1[lyr, h]), '.2f', lang)}" in told.answer
        assert told.prompt == translated("Which head tells time? (its attention peaks land "
                                         "nearest the words)", lang)
        assert told.question.choices == media.timing_head(timing, 0).question.choices
        # when a head hears a word: layer 2 head 2's peak for the third word
        row = clip.layer(1)[1, clip.media.text_rows[2]]
        peak = int(np.argmax(row))
        told, english = told_in(lang, media.tap_time, clip, 1), media.tap_time(clip, 1)
        assert told.answer.startswith(fill(
            lang, "Writing {token}, {head} peaks at {time:.2f} s (weight {weight:.3f}), in the "
                  "bin {bin}.", token=named(clip.tgt_tokens, clip.media.text_rows[2]),
            head="L2 H2", time=peak * clip.media.seconds_per_position, weight=float(row[peak]),
            bin=english.question.choices[peak // 5]))
        assert told.truth == english.truth == peak // 5
        assert told.question.choices == english.question.choices   # the bins: values, as is
        same_tokens(told.answer + told.prompt, english.answer + english.prompt)


# --- the distractors' reasons -----------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_each_distractors_reason_is_said_in_the_language_with_the_same_value(lang):
    """Step 1 (head 1 asked, four heads) and step 2 (head 2's row of *noir*): the reasons
    name the head and the tokens of this step; the values stay the English answers'."""
    from xattn.lesson.computed import COMPUTED

    a = attention()
    for name, args in (("strongest_source", {"head": 2}), ("row_sum", {})):
        tell = COMPUTED[name].tell
        told, english = told_in(lang, tell, a, 0, **args), tell(a, 0, **args)
        assert [(d.key, d.value) for d in told.distractors] == \
            [(d.key, d.value) for d in english.distractors]
        for d, e in zip(told.distractors, english.distractors, strict=True):
            same_tokens(d.reason, e.reason)
            if e.reason:
                assert d.reason != e.reason
        reasons = {d.key: d.reason for d in told.distractors}
        if name == "strongest_source" and "heads" in reasons:
            assert reasons["heads"] == fill(lang, "averaged the heads instead of reading head "
                                                  "{head}", head=2)
        if name == "row_sum" and reasons.get("swapped"):
            i = a.tgt_tokens.index("noir")
            assert reasons["swapped"] == fill(
                lang, "added up the column of {column} instead of the row of {row}",
                column=named(a.src_tokens, i), row=named(a.tgt_tokens, i))
        if name == "row_sum" and "scores" in reasons:
            assert reasons["scores"] == translated("added up the scores before the softmax",
                                                   lang)


# --- a choice built from numbers, on a phone ----------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_a_head_choice_is_shown_in_the_language_and_sends_the_english_value(lang):
    """*Which head's removal changes the output most?* on a French or Arabic phone: the
    options read "la tête 2" / "الرأس 2", the value a phone sends and the store counts is
    "head 2" in every language, and the verdict names the option as the phone read it."""
    from xattn.classroom import RoomView
    from xattn.lesson import shipped_lessons
    from xattn.live.answers import class_step
    from xattn.live.messages import room_message

    lesson = shipped_lessons()["cross-attention"]          # step 8: switch heads off
    told = class_step(lesson, 8)[1]
    q = told.question
    assert q.choices == tuple(f"head {h + 1}" for h in range(len(q.choices)))
    asked = RoomView("HJK23M", 8, 14, "asking", 1, q)
    said = json.loads(room_message(asked, lesson, None, lang).room)["ask"]
    english = json.loads(room_message(asked, lesson, None, "en").room)["ask"]
    assert said["choices"] == english["choices"] == list(q.choices)
    assert said["shown"] == [fill(lang, "head {head}", head=h + 1) for h in range(len(q.choices))]
    assert "shown" not in english                              # English reads its values
    wrong = next(c for c in q.choices if c != told.truth)
    shown = dict(zip(q.choices, said["shown"], strict=True))
    revealed = RoomView("HJK23M", 8, 14, "revealed", 1, q, {wrong: 1}, 1, 1)
    mine = room_message(revealed, lesson, None, lang).personal(q.encode(wrong))
    assert mine["mine"] == wrong                                # the value, never the label
    assert f"<code>{shown[wrong]}</code>" in mine["verdict"]


@pytest.mark.parametrize("lang", LANGS)
def test_a_wait_k_choice_is_said_in_the_language_its_tokens_drawn_apart(lang):
    """*Which source tokens may the first target token see?* (step 4): an option is sent as
    its pieces [words, token, " ", token, ..., words], each token byte for byte the sentence's
    (the phone draws it untranslated), the words the catalog's plural form for the count;
    the value sent stays "the first 2: the black"."""
    from xattn.classroom import RoomView
    from xattn.lesson import shipped_lessons
    from xattn.live.answers import class_step
    from xattn.live.messages import room_message
    from xattn.words import translations

    lesson = shipped_lessons()["cross-attention"]
    a, told = class_step(lesson, 4)
    q, src = told.question, a.src_tokens
    view = RoomView("HJK23M", 4, 14, "asking", 1, q)
    ask = json.loads(room_message(view, lesson, None, lang).room)["ask"]
    assert ask["choices"] == list(q.choices)
    for value, label in zip(q.choices, ask["shown"], strict=True):
        if value.startswith("all "):
            m = len(src)
            assert value == f"all {m}" and label == fill(lang, "all {n}", n=m)
            continue
        m = int(value.split(":")[0].split()[-1])
        assert value == f"the first {m}: {' '.join(src[:m])}"
        assert label[1::2] == list(src[:m])                    # the tokens, one piece each
        assert all(p == " " for p in label[2:-1:2])
        form = translations(lang).ngettext("the first {n}: {tokens}", "the first {n}: {tokens}",
                                           m)
        assert "".join(label) == form.replace("{n}", number(m, "", lang)).replace(
            "{tokens}", " ".join(src[:m]))
    wrong = next(c for c in q.choices if c != told.truth)
    revealed = RoomView("HJK23M", 4, 14, "revealed", 1, q, {wrong: 1}, 1, 1)
    mine = room_message(revealed, lesson, None, lang).personal(q.encode(wrong))
    label = "".join(ask["shown"][q.choices.index(wrong)])
    assert mine["mine"] == wrong and f"<code>{label}</code>" in mine["verdict"]


@pytest.mark.parametrize("lang", LANGS)
def test_a_follow_ups_new_case_is_named_in_the_language(lang):
    """A follow-up (the same question on another case) says so above the step, in the
    phone's language; the case itself (a code span) as it is."""
    from xattn.lesson import shipped_lessons
    from xattn.live.answers import class_step

    lesson = shipped_lessons()["cross-attention"]
    english = class_step(lesson, 1, case=1)[1]
    told = class_step(lesson, 1, case=1, language=lang)[1]
    (case,) = _CODE.findall(english.note.split("The same question on a new case: ")[1])
    assert told.note.startswith(fill(lang, "The same question on a new case: {case}.",
                                     case=case))
    assert told.question == english.question and told.truth == english.truth

"""xattn/live/messages.py: what a phone is sent stays small whatever the class answered,
and says what it shows."""

from __future__ import annotations

import json
import random

from xattn.classroom import RoomView
from xattn.lesson import SHIPPED
from xattn.live.answers import class_step
from xattn.live.messages import BINS, MAX_BARS, room_message


def test_a_class_of_a_thousand_numbers_is_counted_in_ranges_on_the_phone():
    """1,000 students typing numbers give ~600 distinct answers: 600 bars do not fit a phone
    (nor 10 kB), so the phone counts them in equal ranges, every answer in one, and says so."""
    _, told = class_step(SHIPPED, 2)
    q = told.question
    rng, counts = random.Random(0), {}
    for _ in range(1000):
        value = q.decode(q.encode(round(rng.uniform(q.low, q.high), q.decimals)))
        counts[value] = counts.get(value, 0) + 1
    assert len(counts) > MAX_BARS
    msg = room_message(RoomView("HJK23M", 2, 14, "revealed", 1, q, dict(sorted(counts.items())),
                                1000, 1000), SHIPPED)
    assert len(msg.room) <= 10_000
    chart = json.loads(msg.room)["answer"]["charts"][0]
    (panel,) = chart["panels"]
    assert len(panel["x"]) == BINS and sum(panel["series"][0]["y"]) == 1000
    assert chart["title"].endswith(f"counted in {BINS} ranges") and "ranges" in chart["alt"]
    width = (q.high - q.low) / BINS
    k = int((told.truth - q.low) // width)
    assert "right" in panel["series"][0]["text"][min(k, BINS - 1)]


def test_a_few_distinct_numbers_keep_a_bar_each():
    _, told = class_step(SHIPPED, 2)
    q = told.question
    counts = {1.0: 30, 0.9: 5, 2.0: 1}
    msg = room_message(RoomView("HJK23M", 2, 14, "revealed", 1, q, counts, 36, 36), SHIPPED)
    (panel,) = json.loads(msg.room)["answer"]["charts"][0]["panels"]
    assert panel["x"] == ["0.90", "1.00", "2.00"] and panel["series"][0]["y"] == [5.0, 30.0, 1.0]


def test_a_verdict_made_ahead_while_the_step_asks_is_the_reveals_own(monkeypatch):
    """While a step asks, its message makes an answer's verdict ahead (``Message.ahead``, as
    the hub does when a phone's answer is saved): the reveal's own part finds it made (no
    verdict judged again) and says the same as one made at the reveal; each language its
    own words."""
    import xattn.live.messages as messages_module

    _, told = class_step(SHIPPED, 2, language="fr")
    q = told.question
    monkeypatch.setattr(messages_module, "_judged_kept", type(messages_module._judged_kept)())
    judged = []
    real = messages_module.verdict

    def counted(told, answer):
        judged.append(answer)
        return real(told, answer)
    monkeypatch.setattr(messages_module, "verdict", counted)
    text = q.encode(0.37)
    asking = RoomView("HJK23M", 2, 14, "asking", 1, q)
    revealed = RoomView("HJK23M", 2, 14, "revealed", 1, q, {0.37: 1}, 1, 1)
    for lang in ("fr", "ar"):
        room_message(asking, SHIPPED, None, lang).ahead(text)
    assert len(judged) == 2
    fr, ar = (room_message(revealed, SHIPPED, None, lang).personal(text) for lang in ("fr", "ar"))
    assert len(judged) == 2                               # found made
    assert "0,37" in fr["verdict"] and fr["verdict"] != ar["verdict"] and fr["mine"] == 0.37
    monkeypatch.setattr(messages_module, "_judged_kept", type(messages_module._judged_kept)())
    assert room_message(revealed, SHIPPED, None, "fr").personal(text) == fr   # made anew
    assert room_message(revealed, SHIPPED, None, "fr").ahead is None          # revealed: none


def test_the_class_against_the_heads_is_in_each_phones_language():
    """Step 14's table names the heads in each phone's language, whichever language was
    built first (it was made once for every language: English and French phones read the
    Arabic head names)."""
    from xattn.live.build import messages_by_language

    _, told = class_step(SHIPPED, 14)
    q = told.question
    view = RoomView("HJK23M", 14, 14, "revealed", 1, q, {(0, 0): 3, (1, 1): 2}, 3, 3)
    built = messages_by_language(view, SHIPPED, None, ("ar", "en", "fr"))
    table = {lang: json.loads(built[lang].room)["answer"]["versus"] for lang in built}
    assert "الرأس" in table["ar"] and "الرأس" not in table["en"] + table["fr"]
    assert "layer 2, head 4" in table["en"] and "head 4" not in table["fr"]


def test_each_language_of_a_move_gets_the_same_charts_in_its_own_words():
    """A move built in three languages: each language's charts have the same panels (tokens
    and numbers byte for byte) and their title and text alternative in the language."""
    from xattn.live.build import messages_by_language

    _, told = class_step(SHIPPED, 14)
    q = told.question
    view = RoomView("HJK23M", 14, 14, "revealed", 1, q, {(0, 0): 3, (2, 1): 2}, 3, 3)
    built = messages_by_language(view, SHIPPED, None, ("ar", "en", "fr"))
    charts = {lang: json.loads(built[lang].room)["answer"]["charts"] for lang in built}
    assert len(charts["en"]) == len(charts["fr"]) == len(charts["ar"]) >= 1
    for en, fr, ar in zip(charts["en"], charts["fr"], charts["ar"], strict=True):
        numbers = [[{k: v for k, v in p.items() if k not in ("title", "name", "xtitle", "ytitle")}
                    for p in c["panels"]] for c in (en, fr, ar)]
        assert numbers[0] == numbers[1] == numbers[2]
        assert en["title"] != fr["title"] and en["alt"] != fr["alt"] != ar["alt"]

"""The room outside the store: the class's answers as CSV, and the student link's QR code."""

import csv
import io
import xml.etree.ElementTree as ET

import pytest
import segno

from xattn.classroom import Question, Tally, answers_csv, qr_svg


def test_the_csv_has_counts_per_answer_per_round_and_no_ids():
    tallies = [Tally(1, 1, Question("token", ("the", "=cmd|' /C calc'!A0", "the")), {0: 2, 1: 0, 2: 5}),
               Tally(1, 2, Question("token", ("the", "cat")), {0: 0, 1: 7}),
               Tally(2, 1, Question("number", low=-1, high=1), {-0.5: 1, 0.25: 3}),
               Tally(3, 1, Question("choice", ("up", "@down")), {"up": 4, "@down": 0})]
    text = answers_csv(tallies)
    assert text.endswith("\r\n") and text.count("\r\n") == 10 and "\n" not in text.replace("\r\n", "")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["step", "round", "kind", "index", "answer", "count", "timer_seconds",
                       "changed_to_this", "answered", "sure", "think_so", "guess",
                       "misconception"]
    assert [r[:6] for r in rows[1:]] == [
        ["1", "1", "token", "0", "the", "2"],
        ["1", "1", "token", "1", "'=cmd|' /C calc'!A0", "0"],     # a formula stays text
        ["1", "1", "token", "2", "the", "5"],
        ["1", "2", "token", "0", "the", "0"],
        ["1", "2", "token", "1", "cat", "7"],
        ["2", "1", "number", "", "-0.50", "1"],                   # a number stays a number
        ["2", "1", "number", "", "0.25", "3"],
        ["3", "1", "choice", "0", "up", "4"],
        ["3", "1", "choice", "1", "'@down", "0"]]
    assert {tuple(r[6:8]) for r in rows[1:]} == {("", "")}       # no timer, no revote given
    assert [r[8] for r in rows[1:]] == ["7"] * 3 + ["7"] * 2 + ["4"] * 2 + ["4"] * 2
    assert {tuple(r[9:12]) for r in rows[1:]} == {("", "", "")}  # nobody said how sure
    assert {r[12] for r in rows[1:]} == {""}                     # no misconception given
    with pytest.raises(TypeError, match="answers_csv takes Tally records"):
        answers_csv([(1, 1, {})])


def test_the_csv_has_each_rounds_timer_and_who_changed_to_each_answer_in_a_revote():
    from xattn.classroom import Timer
    q = Question("choice", ("up", "down", "flat"))
    tallies = [Tally(4, 1, q, {"up": 5, "down": 3, "flat": 0}, Timer(60, 1e9)),
               Tally(4, 2, q, {"up": 2, "down": 6, "flat": 1}, Timer(30, 1e9, reveal=True))]
    moved = {(4, 2): {("up", "down"): 3, ("down", "down"): 3, ("up", "up"): 2,
                      (None, "flat"): 1, ("down", None): 0}}
    rows = list(csv.reader(io.StringIO(answers_csv(tallies, moves=moved), newline="")))
    assert [r[4:8] for r in rows[1:]] == [
        ["up", "5", "60", ""], ["down", "3", "60", ""], ["flat", "0", "60", ""],
        ["up", "2", "30", "0"], ["down", "6", "30", "3"],   # 3 moved to "down" from "up"
        ["flat", "1", "30", "0"]]                           # a new voter did not change


def test_parts_and_links_have_a_row_per_part_choice_and_per_link_drawn():
    jobs = Question("parts", ("sink", "aligns"), rows=("head 1", "=head 2"))
    pair = Question("links", ("the", "cat"), rows=("le", "chat"))
    tallies = [Tally(12, 1, jobs, {("head 1", "sink"): 3, ("head 1", "aligns"): 1,
                                   ("=head 2", "sink"): 0, ("=head 2", "aligns"): 2}, None, 4),
               Tally(12, 2, jobs, {("head 1", "sink"): 1, ("head 1", "aligns"): 3,
                                   ("=head 2", "sink"): 0, ("=head 2", "aligns"): 4}, None, 4),
               Tally(14, 1, pair, {(0, 0): 3, (0, 1): 0, (1, 0): 1, (1, 1): 2}, None, 3)]
    moved = {(12, 2): {(("sink", "aligns"), ("aligns", "aligns")): 2,     # head 1 changed
                       (("aligns", None), ("aligns", "aligns")): 1,       # head 2 added
                       (None, ("sink", "aligns")): 1}}                     # a new voter
    rows = list(csv.reader(io.StringIO(answers_csv(tallies, moves=moved), newline="")))
    assert {tuple(r[9:]) for r in rows[1:]} == {("", "", "", "")}
    assert [r[2:9] for r in rows[1:]] == [
        ["parts", "0", "head 1: sink", "3", "", "", "4"],
        ["parts", "1", "head 1: aligns", "1", "", "", "4"],
        ["parts", "0", "'=head 2: sink", "0", "", "", "4"],     # a formula stays text
        ["parts", "1", "'=head 2: aligns", "2", "", "", "4"],
        ["parts", "0", "head 1: sink", "1", "", "0", "4"],
        ["parts", "1", "head 1: aligns", "3", "", "2", "4"],     # 2 moved to aligns
        ["parts", "0", "'=head 2: sink", "0", "", "0", "4"],
        ["parts", "1", "'=head 2: aligns", "4", "", "1", "4"],   # 1 labelled it now
        ["links", "0-0", "le → the", "3", "", "", "3"],          # only links drawn
        ["links", "1-0", "chat → the", "1", "", "", "3"],
        ["links", "1-1", "chat → cat", "2", "", "", "3"]]


def test_each_answers_count_is_split_by_how_sure_its_students_were():
    """Per row, ``sure``, ``think_so`` and ``guess`` count the students of ``count`` who gave
    that level (the rest gave none); a part's choice or a link counts every answer holding
    it; a round nobody gave a level in has them empty. Counted by hand."""
    word = Question("choice", ("up", "down"))
    jobs = Question("parts", ("sink", "aligns"), rows=("head 1", "head 2"))
    tallies = [Tally(1, 1, word, {"up": 4, "down": 2}),
               Tally(1, 2, word, {"up": 6, "down": 0}),
               Tally(2, 1, jobs, {("head 1", "sink"): 3, ("head 1", "aligns"): 0,
                                  ("head 2", "sink"): 0, ("head 2", "aligns"): 2}, None, 3)]
    sure = {(1, 1): {("up", "sure"): 2, ("up", "guess"): 1, ("up", None): 1,
                     ("down", "think_so"): 2},
            (2, 1): {(("sink", "aligns"), "sure"): 2, (("sink", None), "guess"): 1}}
    rows = list(csv.DictReader(io.StringIO(answers_csv(tallies, confidence=sure),
                                           newline="")))
    got = [(r["step"], r["round"], r["answer"], r["count"], r["sure"], r["think_so"],
            r["guess"]) for r in rows]
    assert got == [("1", "1", "up", "4", "2", "0", "1"),       # and 1 said nothing
                   ("1", "1", "down", "2", "0", "2", "0"),
                   ("1", "2", "up", "6", "", "", ""),            # nobody said how sure
                   ("1", "2", "down", "0", "", "", ""),
                   ("2", "1", "head 1: sink", "3", "2", "0", "1"),
                   ("2", "1", "head 1: aligns", "0", "0", "0", "0"),
                   ("2", "1", "head 2: sink", "0", "0", "0", "0"),
                   ("2", "1", "head 2: aligns", "2", "2", "0", "0")]


def test_the_qr_code_is_an_accessible_svg_that_encodes_the_link():
    url = "https://lecture.example.org/?room=HJK23M"
    svg = qr_svg(url)
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("role") == "img"
    assert root.get("aria-label") == f"QR code of the class link: {url}"
    assert root.find("{http://www.w3.org/2000/svg}title").text == root.get("aria-label")
    assert root.get("viewBox") and root.get("width") is None      # scales to its container
    assert '<path fill="#fff"' in svg                              # readable on a dark theme
    expected = ET.fromstring(segno.make(url, error="m").svg_inline(border=4))
    paths = [p.get("d") for p in root.iter("{http://www.w3.org/2000/svg}path")]
    assert expected.find("path").get("d") in paths          # segno's modules for this URL
    other = qr_svg("https://lecture.example.org/?room=HJK23N")
    assert other != svg


def test_the_qr_code_escapes_its_label_and_refuses_a_host_link():
    svg = qr_svg("https://x.org/?room=HJK23M&a=<b>", label='Join "us" & <learn>')
    root = ET.fromstring(svg)
    assert root.get("aria-label") == 'Join "us" & <learn>: https://x.org/?room=HJK23M&a=<b>'
    for url in ("https://x.org/?room=HJK23M&host=abc", "https://x.org/?host=&room=HJK23M"):
        with pytest.raises(ValueError, match="carries the host secret"):
            qr_svg(url)
    with pytest.raises(ValueError, match="1 to 2000 characters; received 0"):
        qr_svg("")
    with pytest.raises(TypeError, match="qr_svg takes a str url"):
        qr_svg(b"https://x.org")

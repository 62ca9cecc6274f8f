"""A step's question: which answers it takes, how they are stored, and its own checks."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xattn.classroom import AnswerRefused, Question
from xattn.classroom.question import MAX_CHOICES, MAX_LINKS, MAX_QUESTION_BYTES, MAX_ROWS, MAX_WORDS

JOBS = Question("parts", ("position", "aligns", "sink", "spread"),
                rows=("head 1", "head 2", "head 3"))
PAIR = Question("links", ("the", "cat", "the", "</s>"), rows=("le", "chat", "le"))


@pytest.mark.parametrize("q, value, stored, back", [
    (Question("choice", ("up", "down")), "up", "0", "up"),
    (Question("choice", ("=1+1", "-x")), "-x", "1", "-x"),
    (Question("token", ("the", "cat", "the")), 2, "2", 2),
    (Question("token", ("solo",)), 0, "0", 0),
    (Question("number", low=0, high=1), 0.125, "0.12", 0.12),   # round half to even
    (Question("number", low=-1, high=1, decimals=0), -0.6, "-1", -1.0),
    (Question("number", low=0, high=10, decimals=3), 7, "7.000", 7.0),
    (JOBS, {"head 1": "sink", "head 3": "aligns"}, "2,-,1", ("sink", None, "aligns")),
    (JOBS, ["sink", None, "aligns"], "2,-,1", ("sink", None, "aligns")),    # or one per part
    (JOBS, ("spread", "spread", "spread"), "3,3,3", ("spread",) * 3),
    (PAIR, [(2, 0), (0, 2), (1, 1), (0, 2)], "0-2 1-1 2-0", ((0, 2), (1, 1), (2, 0))),
    (PAIR, {(1, 1)}, "1-1", ((1, 1),)),
    (PAIR, frozenset({(0, 3), (0, 0)}), "0-0 0-3", ((0, 0), (0, 3))),
])
def test_an_accepted_answer_is_stored_canonically_and_read_back(q, value, stored, back):
    assert q.encode(value) == stored and q.decode(stored) == back


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_number_is_taken_exactly_when_finite_and_in_range(x):
    q = Question("number", low=-2.5, high=3, decimals=1)
    if math.isfinite(x) and -2.5 <= x <= 3:
        assert abs(q.decode(q.encode(x)) - x) <= 0.05 + 1e-12
    else:
        with pytest.raises(AnswerRefused, match="a number from -2.5 to 3"):
            q.encode(x)


@given(st.lists(st.text(max_size=8), min_size=1, max_size=10), st.integers(-3, 12))
def test_a_token_is_taken_exactly_when_its_index_exists(tokens, i):
    q = Question("token", tuple(tokens))
    if 0 <= i < len(tokens):
        assert q.decode(q.encode(i)) == i
    else:
        with pytest.raises(AnswerRefused, match=f"from 0 to {len(tokens) - 1}; received {i}"):
            q.encode(i)


@given(st.lists(st.tuples(st.integers(-2, 5), st.integers(-2, 6)), max_size=40))
def test_links_are_stored_sorted_once_each_and_only_inside_the_pair(links):
    inside = {(t, s) for t, s in links if 0 <= t < 3 and 0 <= s < 4}
    if links and len(inside) == len(set(links)) and len(inside) <= MAX_LINKS:
        text = PAIR.encode(links)
        assert PAIR.decode(text) == tuple(sorted(inside))
        assert PAIR.encode(list(reversed(links))) == text        # one set, one text
    else:
        with pytest.raises(AnswerRefused, match="links \\(target, source\\): target positions "
                                                "from 0 to 2, source positions from 0 to 3"):
            PAIR.encode(links)


@pytest.mark.parametrize("q, value", [
    (JOBS, {}),                                        # nothing answered
    (JOBS, {"head 1": None}),
    (JOBS, {"head 4": "sink"}),                        # no such part
    (JOBS, {"head 1": "SINK"}),                        # no such choice
    (JOBS, ("sink", None)),                            # one per part: three
    (JOBS, "sink"),
    (JOBS, {"head 1": 2}),                             # a choice is named, not numbered
    (PAIR, []),                                        # at least one link
    (PAIR, "0-1"),                                     # pairs, not their text
    (PAIR, [(0, 1, 2)]),
    (PAIR, [(True, 0)]),                               # a bool is not a position
    (PAIR, [(0.0, 1)]),
    (PAIR, {(0, 1): 1}),
    (PAIR, [(3, 0)]),                                  # outside the target words
    (PAIR, [(0, 4)]),                                  # outside the source words
    (Question("links", ("a",) * 16, rows=("b",) * 16),
     [(t, s) for t in range(3) for s in range(11)]),  # 33 links: more than MAX_LINKS
])
def test_a_parts_or_links_answer_outside_the_question_is_refused(q, value):
    with pytest.raises(AnswerRefused, match="this step takes"):
        q.encode(value)


def test_each_answer_counts_towards_its_parts_choices_or_its_links():
    assert JOBS.elements(("sink", None, "aligns")) == (("head 1", "sink"), ("head 3", "aligns"))
    assert PAIR.elements(((0, 0), (1, 1))) == ((0, 0), (1, 1))
    assert Question("token", ("a", "b")).elements(1) == (1,)
    assert len(JOBS.options()) == 12 and JOBS.options()[:2] == [("head 1", "position"),
                                                              ("head 1", "aligns")]
    assert PAIR.options()[:5] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)] and \
        len(PAIR.options()) == 12


def test_a_question_survives_json_and_repeats_are_kept_for_tokens():
    for q in (Question("token", ("the", "<b>", "the")), Question("choice", ("é", "`x`")),
              Question("number", low=0.5, high=2, decimals=3), JOBS, PAIR):
        assert Question.from_json(q.to_json()) == q
    assert Question("number", low=0, high=1).options() == []
    assert repr(Question("token", ["a"])) == "Question('token', ('a',))"


@pytest.mark.parametrize("kwargs, error, match", [
    ({"kind": "quiz", "choices": ("a", "b")}, ValueError, "kind must be one of"),
    ({"kind": "choice", "choices": ("a",)}, ValueError, "needs 2 to 64 choices"),
    ({"kind": "choice", "choices": ("a", "a")}, ValueError, "choices must differ"),
    ({"kind": "choice", "choices": "ab"}, TypeError, "must be a tuple of str"),
    ({"kind": "token", "choices": ()}, ValueError, "needs 1 to 64 choices"),
    ({"kind": "token", "choices": ("a", 1)}, TypeError, "must hold str; received int 1"),
    ({"kind": "token", "choices": ("a",) * (MAX_CHOICES + 1)}, ValueError, "MAX_CHOICES"),
    ({"kind": "token", "choices": ("a" * 9000, "b" * 9000)}, ValueError, "MAX_QUESTION_BYTES"),
    ({"kind": "number", "low": 1, "high": 1}, ValueError, "low must be below high"),
    ({"kind": "number", "low": 0, "high": math.inf}, TypeError, "high must be a finite number"),
    ({"kind": "number", "low": True, "high": 2}, TypeError, "low must be a finite number"),
    ({"kind": "number", "choices": ("a",)}, ValueError, "takes low and high, not choices"),
    ({"kind": "number", "decimals": 7}, ValueError, "decimals must be an int from 0 to 6"),
    ({"kind": "parts", "choices": ("a", "b")}, ValueError, "needs 1 to 8 rows"),
    ({"kind": "parts", "choices": ("a", "b"), "rows": ("h",) * (MAX_ROWS + 1)}, ValueError,
     "MAX_ROWS"),
    ({"kind": "parts", "choices": ("a", "b"), "rows": ("h", "h")}, ValueError,
     "rows must differ"),
    ({"kind": "parts", "choices": ("a",), "rows": ("h",)}, ValueError, "needs 2 to 64 choices"),
    ({"kind": "parts", "choices": ("a", "b"), "rows": "h"}, TypeError, "rows must be a tuple"),
    ({"kind": "links", "choices": ("a",), "rows": ()}, ValueError, "needs 1 to 16 rows"),
    ({"kind": "links", "choices": ("a",) * (MAX_WORDS + 1), "rows": ("b",)}, ValueError,
     "MAX_WORDS"),
    ({"kind": "links", "choices": ("a",), "rows": ("b", 3)}, TypeError,
     "rows must hold str; received int 3"),
    ({"kind": "token", "choices": ("a",), "rows": ("b",)}, ValueError,
     "only parts and links and tap questions take rows"),
])
def test_a_malformed_question_is_refused_naming_what_it_expects(kwargs, error, match):
    with pytest.raises(error, match=match):
        Question(**kwargs)
    assert MAX_QUESTION_BYTES == 16_384

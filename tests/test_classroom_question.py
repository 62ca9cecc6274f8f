"""A step's question: which answers it takes, how they are stored, and its own checks."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xattn.classroom import AnswerRefused, Question
from xattn.classroom.question import MAX_CHOICES, MAX_QUESTION_BYTES


@pytest.mark.parametrize("q, value, stored, back", [
    (Question("choice", ("up", "down")), "up", "0", "up"),
    (Question("choice", ("=1+1", "-x")), "-x", "1", "-x"),
    (Question("token", ("the", "cat", "the")), 2, "2", 2),
    (Question("token", ("solo",)), 0, "0", 0),
    (Question("number", low=0, high=1), 0.125, "0.12", 0.12),   # round half to even
    (Question("number", low=-1, high=1, decimals=0), -0.6, "-1", -1.0),
    (Question("number", low=0, high=10, decimals=3), 7, "7.000", 7.0),
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


def test_a_question_survives_json_and_repeats_are_kept_for_tokens():
    for q in (Question("token", ("the", "<b>", "the")), Question("choice", ("é", "`x`")),
              Question("number", low=0.5, high=2, decimals=3)):
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
])
def test_a_malformed_question_is_refused_naming_what_it_expects(kwargs, error, match):
    with pytest.raises(error, match=match):
        Question(**kwargs)
    assert MAX_QUESTION_BYTES == 16_384

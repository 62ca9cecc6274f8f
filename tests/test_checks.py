"""The boundary checks every public function uses: ints, bools, seeds, tokens."""

import numpy as np
import pytest

from xattn._checks import check_bool, check_heads, check_int, check_seed, check_tokens


@pytest.mark.parametrize("value,error,match", [
    (True, TypeError, r"n must be an int; received bool True"),
    (np.True_, TypeError, r"received bool"),
    (3.0, TypeError, r"received float 3.0"),
    ("3", TypeError, r"received str '3'"),
    (None, TypeError, r"received NoneType None"),
    (0, ValueError, r"n must be an int >= 1 and <= 9; received 0"),
    (10, ValueError, r"received 10"),
])
def test_check_int_refuses_what_is_not_a_whole_number_in_range(value, error, match):
    with pytest.raises(error, match=match):
        check_int(value, "n", minimum=1, maximum=9)


def test_check_int_takes_python_and_numpy_ints():
    assert check_int(np.int64(4), "n", minimum=1) == 4 and type(check_int(np.int8(2), "n")) is int


def test_seeds_must_be_reproducible():
    assert check_seed(2**63 - 1) == 2**63 - 1
    with pytest.raises(TypeError, match="None, which would give different numbers in every run"):
        check_seed(None)
    with pytest.raises(ValueError, match=r"seed must be an int >= 0"):
        check_seed(-1)


def test_bools_are_bools():
    assert check_bool(np.False_, "pos") is False
    with pytest.raises(TypeError, match=r"pos must be True or False; received str 'false'"):
        check_bool("false", "pos")
    with pytest.raises(TypeError, match=r"received int 1"):
        check_bool(1, "pos")


def test_tokens_and_heads():
    with pytest.raises(TypeError, match=r"tokens must hold str tokens; received int 3"):
        check_tokens(["a", 3], 2, "tokens")
    with pytest.raises(TypeError, match=r"not one string"):
        check_tokens("le chat", 2, "tokens")
    with pytest.raises(ValueError, match=r"must hold 3 tokens to match the weights; received 2"):
        check_tokens(["a", "b"], 3, "tokens")
    assert check_heads(np.array([1, 1, 0]), 2, "heads") == (0, 1)

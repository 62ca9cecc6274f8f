"""The .npz attention file: round trips, and every problem of an untrusted upload, each reported."""

import io
import re
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from xattn.attention import masked_softmax
from xattn.attnfile import (
    MAX_BYTES,
    AttentionFile,
    AttentionFileError,
    attention_to_bytes,
    load_attention,
    save_attention,
)


def softmax_rows(rng, shape):
    return masked_softmax(rng.standard_normal(shape)).astype(np.float32)


def raw_npz(**arrays) -> bytes:
    """An .npz written without any of our checks (what a stranger might upload)."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def valid_arrays(n_layers=2, n_heads=3, n_tgt=4, n_src=5, seed=0):
    rng = np.random.default_rng(seed)
    return dict(cross_attention=softmax_rows(rng, (n_layers, n_heads, n_tgt, n_src)),
                src_tokens=np.array([f"s{i}" for i in range(n_src)]),
                tgt_tokens=np.array([f"t{i}" for i in range(n_tgt)]))


def problems_of(data, **kw) -> list[str]:
    with pytest.raises(AttentionFileError) as info:
        load_attention(data, **kw)
    assert str(info.value) == "\n".join(info.value.problems)
    return info.value.problems


# ---------------------------------------------------------------- round trips
# NumPy's unicode arrays drop trailing NULs: the writer refuses them (tested below)
text = st.text(st.characters(blacklist_characters="\0"), max_size=30)
tokens = st.lists(st.text(st.characters(blacklist_characters="\0"), max_size=8), min_size=1,
                  max_size=6)


@given(src=tokens, tgt=tokens, n_layers=st.integers(1, 3), n_heads=st.integers(1, 3),
       three_d=st.booleans(), meta=st.fixed_dictionaries({}, optional={
           "model": text, "src_text": text, "tgt_text": text}), seed=st.integers(0, 2**32 - 1))
def test_round_trip(src, tgt, n_layers, n_heads, three_d, meta, seed):
    w = softmax_rows(np.random.default_rng(seed), (n_layers, n_heads, len(tgt), len(src)))
    if three_d:
        w = w[0]
    loaded = load_attention(attention_to_bytes(w, src, tgt, **meta))
    assert loaded.weights.dtype == np.float32
    np.testing.assert_array_equal(loaded.weights, w if not three_d else w[None])
    assert loaded.src_tokens == tuple(src) and loaded.tgt_tokens == tuple(tgt)
    assert loaded.n_layers == (1 if three_d else n_layers) and loaded.n_heads == n_heads
    for name in ("model", "src_text", "tgt_text"):
        assert getattr(loaded, name) == meta.get(name)


def test_path_and_file_objects(tmp_path):
    a = valid_arrays()
    path = tmp_path / "attention"          # no suffix: written exactly there, not attention.npz
    save_attention(path, a["cross_attention"], list(a["src_tokens"]), list(a["tgt_tokens"]),
                   model="m")
    assert path.exists()
    for source in (path, str(path), path.read_bytes(), open(path, "rb"),
                   bytearray(path.read_bytes())):
        loaded = load_attention(source)
        assert isinstance(loaded, AttentionFile) and loaded.model == "m"
    buffer = io.BytesIO()
    save_attention(buffer, a["cross_attention"], ["a"] * 5, ["b"] * 4)
    buffer.seek(0)
    assert load_attention(buffer).src_tokens == ("a",) * 5
    assert repr(loaded) == "AttentionFile(model='m', n_layers=2, n_heads=3, n_tgt=4, n_src=5)"


def test_integer_and_float64_weights_are_accepted_as_float32():
    one_hot = np.eye(3, dtype=np.int64)[None]                      # (1, 3, 3)
    loaded = load_attention(raw_npz(cross_attention=one_hot, src_tokens=np.array(list("abc")),
                                    tgt_tokens=np.array(list("xyz"))))
    assert loaded.weights.dtype == np.float32 and loaded.weights.shape == (1, 1, 3, 3)


def test_all_zero_rows_are_valid():
    a = valid_arrays()
    a["cross_attention"][1, 2, 3] = 0.0
    assert load_attention(raw_npz(**a)).weights[1, 2, 3].sum() == 0


# ---------------------------------------------------------------- every problem, each reported
def test_every_problem_in_one_file_is_reported_on_its_own_line():
    a = valid_arrays()
    w = a["cross_attention"].astype(np.float64)
    w[0, 0, 0, 1] = np.nan                        # non-finite (its row's sum is not judged)
    w[0, 1, 1, :2] = [1.5, -0.5]                  # two values outside [0, 1] (row still sums to 1)
    w[0, 1, 1, 2:] = 0
    w[1, 2, 3] *= 0.5                             # one row summing to 0.5
    problems = problems_of(raw_npz(cross_attention=w, src_tokens=np.array(["a", "b"]),
                                   tgt_tokens=np.arange(4), model=np.array(["x", "y"])))
    assert problems == [       # what the headers declare first (judged before unpacking)
        "model must be a single unicode string (a 0-d array); received dtype <U1, shape (2,).",
        "1 value is not finite (NaN or infinity); the first is nan at layer 1, head 1, row 1, "
        "column 2.",
        "2 values lie outside [0, 1]; the first is 1.5 at layer 1, head 2, row 2, column 1.",
        "1 row does not sum to 1 (within 0.001) and is not all zero; the first is layer 2, "
        "head 3, row 4, which sums to 0.5.",
        "tgt_tokens must hold unicode strings; received dtype int64 (first value 0).",
    ]


def test_token_counts_against_the_shape():
    a = valid_arrays(n_tgt=4, n_src=5)
    a["src_tokens"] = a["src_tokens"][:3]
    a["tgt_tokens"] = np.array(["t"] * 6)
    assert problems_of(raw_npz(**a)) == [
        "src_tokens has 3 tokens but cross_attention has 5 source columns (n_src).",
        "tgt_tokens has 6 tokens but cross_attention has 4 target rows (n_tgt).",
    ]


def test_many_bad_rows_are_counted_and_the_first_named():
    a = valid_arrays(n_layers=1, n_heads=2, n_tgt=3)
    a["cross_attention"][0, 1] *= 2
    a["cross_attention"] = a["cross_attention"] / 2     # every row sums to 0.5 or 1
    (problem,) = problems_of(raw_npz(**a))
    assert problem.startswith("3 rows do not sum to 1 (within 0.001) and are not all zero; "
                              "the first is layer 1, head 1, row 1, which sums to 0.5")


@pytest.mark.parametrize("weights, expected", [
    (np.ones((2, 2), dtype=np.float32), r"shape \(n_layers, n_heads, n_tgt, n_src\) or "
                                        r"\(n_heads, n_tgt, n_src\), every size >= 1; received "
                                        r"shape \(2, 2\)"),
    (np.ones((1, 1, 1, 2, 2)), r"received shape \(1, 1, 1, 2, 2\)"),
    (np.ones((1, 0, 2)), r"received shape \(1, 0, 2\)"),
    (np.ones((1, 2, 2), dtype=np.complex64), "real numbers; received complex dtype complex64"),
    (np.array([[["a", "b"]]]), "must hold numbers; received dtype <U1"),
    (np.ones((1, 2, 2), dtype=bool), "must hold numbers; received dtype bool"),
])
def test_weights_of_the_wrong_kind(weights, expected):
    (problem,) = problems_of(raw_npz(cross_attention=weights, src_tokens=np.array(["a", "b"]),
                                     tgt_tokens=np.array(["x", "y"])))
    assert problem.startswith("cross_attention must")
    assert re.search(expected, problem)


def test_missing_arrays_name_what_the_file_has():
    assert problems_of(raw_npz(weights=np.ones(3), tokens=np.array(["a"]))) == [
        "Missing cross_attention, src_tokens, tgt_tokens (the file has: 'tokens, weights')."]


def test_bytes_tokens_are_not_strings():
    a = valid_arrays()
    a["src_tokens"] = a["src_tokens"].astype("S")
    (problem,) = problems_of(raw_npz(**a))
    assert problem == "src_tokens must hold unicode strings; received dtype |S2 (first value b's0')."


# ---------------------------------------------------------------- hostile files
@pytest.mark.parametrize("data, start", [
    (b"", "b''"),
    (b"%PDF-1.7 not a zip at all", "start with b'%PDF-1.7 not a zip at all'."),
    (np.lib.format.MAGIC_PREFIX + b"\x01\x00 an .npy, not an .npz" * 3, r"b'\x93NUMPY"),
])
def test_not_an_npz(data, start):
    (problem,) = problems_of(data)
    assert problem.startswith("This is not an .npz file (a zip of NumPy arrays, as numpy.savez "
                              "writes): the ")
    assert start in problem
    assert len(problem) < 200          # the received bytes are quoted, cut short


def test_size_is_checked_before_reading(tmp_path):
    class Huge(io.RawIOBase):
        def seekable(self):
            return True

        def tell(self):
            return 0

        def seek(self, offset, whence=0):
            return 60 * 10**6 if whence == io.SEEK_END else 0

        def read(self, n=-1):
            raise AssertionError("read before the size check")

    assert problems_of(Huge()) == [
        "The file is 60 MB (60,000,000 bytes); the limit is 20 MB (20,000,000 bytes)."]
    sparse = tmp_path / "big.npz"
    with open(sparse, "wb") as fh:
        fh.truncate(MAX_BYTES + 1)       # sparse: nothing is written, only the size is set
    assert problems_of(sparse) == [
        "The file is 20 MB (20,000,001 bytes); the limit is 20 MB (20,000,000 bytes)."]
    assert problems_of(b"x" * 2000, max_bytes=1000) == [
        "The file is 2 kB (2,000 bytes); the limit is 1 kB (1,000 bytes)."]
    assert problems_of(b"x" * 1000, max_bytes=999) == [
        "The file is 1 kB (1,000 bytes); the limit is 999 bytes."]


def test_unpacked_size_is_checked_from_the_zip_directory(unpacked):
    padded = raw_npz(**valid_arrays(), padding=np.zeros((1000, 1000)))   # any extra array counts
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(padded)) as src, \
            zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    bomb = buffer.getvalue()
    unpacked.clear()
    assert len(bomb) < 20_000                      # 8 MB of zeros, deflated
    assert problems_of(bomb, max_bytes=10**6) == [
        "The arrays would take 8 MB once unpacked; the limit is 1 MB."]
    assert unpacked == []


def test_a_header_claiming_more_data_than_the_archive_holds():
    npy = io.BytesIO()
    np.lib.format.write_array_header_1_0(npy, {"descr": "<f8", "fortran_order": False,
                                               "shape": (10**9,)})
    npy.write(b"\x00" * 16)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("cross_attention.npy", npy.getvalue())
        z.writestr("src_tokens.npy", _npy(np.array(["a"])))
        z.writestr("tgt_tokens.npy", _npy(np.array(["b"])))
    (problem,) = problems_of(buffer.getvalue())
    assert problem.startswith("cross_attention's header claims shape (1000000000,) of float64 "
                              "(8000 MB) but the archive holds")


def _npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


UNPICKLED = []


class Trap:
    def __reduce__(self):
        return (UNPICKLED.append, ("unpickled!",))


def test_object_arrays_are_never_unpickled():
    a = valid_arrays()
    a["src_tokens"] = np.array([Trap()] * 5, dtype=object)
    a["model"] = np.array(Trap(), dtype=object)
    problems = problems_of(raw_npz(**a))
    assert problems == [
        f"{name} holds Python objects (dtype object), which only pickle can load; pickled data "
        f"is never loaded. Save plain numbers and unicode strings." for name in ("src_tokens",
                                                                                 "model")]
    assert UNPICKLED == []


@given(st.binary(max_size=400))
def test_arbitrary_bytes_give_only_attention_file_errors(data):
    with pytest.raises(AttentionFileError):
        load_attention(data)


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4))
def test_damaged_files_give_only_attention_file_errors(flips):
    data = bytearray(attention_to_bytes(**{"weights": valid_arrays()["cross_attention"],
                                           "src_tokens": ["a"] * 5, "tgt_tokens": ["b"] * 4}))
    for position, value in flips:
        data[position % len(data)] = value
    try:
        load_attention(bytes(data))
    except AttentionFileError:
        pass


# ---------------------------------------------------------------- the writer checks too
def test_save_refuses_invalid_arrays_and_writes_nothing(tmp_path):
    path = tmp_path / "a.npz"
    with pytest.raises(AttentionFileError) as info:
        save_attention(path, np.full((1, 2, 3), 0.5), "abc", ["x", 2], model=3)
    assert info.value.problems == [
        "src_tokens must be a sequence of strings, one per token; received a single string 'abc'.",
        "tgt_tokens must hold strings; received int 2 at position 1.",
        "model must be a string or None, not ending in a NUL character; received int 3.",
    ]
    assert not path.exists()
    with pytest.raises(AttentionFileError, match="3 rows do not sum to 1"):
        attention_to_bytes(np.full((1, 3, 3), 0.5), list("abc"), list("xyz"))
    with pytest.raises(AttentionFileError, match="weights must be an array of numbers"):
        attention_to_bytes([[0.5], [0.5, 0.5]], ["a"], ["x"])


def test_save_refuses_trailing_nul_characters():
    with pytest.raises(AttentionFileError) as info:
        attention_to_bytes(np.ones((1, 1, 1)), ["a\0"], ["y"], src_text="b\0")
    assert info.value.problems == [
        "src_tokens must not end in NUL characters (NumPy's unicode arrays drop them); received "
        "'a\\x00' at position 0.",
        "src_text must be a string or None, not ending in a NUL character; received str 'b\\x00'."]


def test_long_values_are_cut():
    with pytest.raises(AttentionFileError) as info:
        attention_to_bytes(np.ones((1, 1, 1)), "x" * 500, ["y"])
    (problem,) = info.value.problems
    assert "'" + "x" * 58 + "…" in problem and "x" * 59 not in problem


@pytest.mark.parametrize("bad, error, expected", [
    (True, TypeError, "max_bytes must be an int; received bool True"),
    (1.5, TypeError, "max_bytes must be an int; received float 1.5"),
    ("20", TypeError, "max_bytes must be an int; received str '20'"),
    (0, ValueError, "max_bytes must be an int >= 1; received 0"),
    (-5, ValueError, "max_bytes must be an int >= 1; received -5"),
])
def test_max_bytes_must_be_a_positive_int(bad, error, expected):
    with pytest.raises(error, match=re.escape(expected)):
        load_attention(b"", max_bytes=bad)


def test_file_of_the_wrong_type():
    with pytest.raises(TypeError, match="bytes, a path or a binary file object; received int"):
        load_attention(3)
    with pytest.raises(TypeError, match="binary mode; read\\(\\) returned str"):
        load_attention(io.StringIO("abc"))


# ---------------------------------------------------------------- what a file may declare
def hostile(shape, dtype=np.int8, n_src=None, n_tgt=None) -> bytes:
    """A small, valid .npz declaring a big shape (what took the server past 3 GB)."""
    w = np.ones(shape, dtype) if shape[-1] == 1 else np.zeros(shape, dtype)
    n_src, n_tgt = n_src or shape[-1], n_tgt or shape[-2]
    buffer = io.BytesIO()
    np.savez_compressed(buffer, cross_attention=w,
                        src_tokens=np.array([str(i) for i in range(n_src)]),
                        tgt_tokens=np.array([str(i) for i in range(n_tgt)]))
    return buffer.getvalue()


@pytest.fixture
def unpacked(monkeypatch):
    """The archive members a load unpacks (headers are read apart, without unpacking)."""
    names, read = [], zipfile.ZipFile.read

    def spy(self, name, *args, **kwargs):
        names.append(name if isinstance(name, str) else name.filename)
        return read(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "read", spy)
    return names


@pytest.mark.parametrize("shape, expected", [
    ((1000, 1000, 1, 1), [
        "cross_attention may have at most 24 layers; received 1000 (shape (1000, 1000, 1, 1)). "
        "Save the ones to show, e.g. weights[:24].",
        "cross_attention may have at most 16 heads per layer; received 1000 (shape (1000, 1000, "
        "1, 1)). Save the ones to show, e.g. weights[:, :16]."]),
    ((100, 100, 1, 1), [
        "cross_attention may have at most 24 layers; received 100 (shape (100, 100, 1, 1)). "
        "Save the ones to show, e.g. weights[:24].",
        "cross_attention may have at most 16 heads per layer; received 100 (shape (100, 100, 1, "
        "1)). Save the ones to show, e.g. weights[:, :16]."]),
    ((1, 1, 5000, 10000), [
        "cross_attention may have at most 64 target rows (n_tgt); received 5000 (shape (1, 1, "
        "5000, 10000)). The page shows at most 64 tokens a side.",
        "cross_attention may have at most 64 source columns (n_src); received 10000 (shape (1, "
        "1, 5000, 10000)). The page shows at most 64 tokens a side.",
        "src_tokens may hold at most 64 tokens, as the page shows at most 64 a side; received "
        "10000.",
        "tgt_tokens may hold at most 64 tokens, as the page shows at most 64 a side; received "
        "5000.",
        "The arrays would take 50.2 MB once unpacked; the limit is 20 MB."]),
])
def test_a_shape_beyond_the_page_is_refused_from_the_headers_before_unpacking(
        shape, expected, unpacked):
    """The issue's files: 1000 x 1000 heads of one token (1.6 kB), 100 x 100 (0.7 kB), and
    int8 zeros of 5000 x 10000 tokens (72 kB). Nothing of what they declare is unpacked."""
    import tracemalloc

    data = hostile(shape)
    assert len(data) < 80_000
    tracemalloc.start()
    try:
        problems = problems_of(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problems == expected
    assert "cross_attention.npy" not in unpacked
    assert peak < 2_000_000           # before: 8 MB (1000 x 1000) to 400 MB (5000 x 10000)


@pytest.mark.parametrize("shape", [(24, 16, 64, 64), (16, 64, 64), (6, 8, 1, 1), (1, 1, 64, 1)])
def test_the_largest_files_the_page_shows_load(shape):
    w = softmax_rows(np.random.default_rng(1), shape)
    n_tgt, n_src = shape[-2:]
    loaded = load_attention(attention_to_bytes(w, [f"s{i}" for i in range(n_src)],
                                               [f"t{i}" for i in range(n_tgt)]))
    assert loaded.weights.shape == ((1, *shape) if len(shape) == 3 else shape)


@pytest.mark.parametrize("shape, what", [
    ((25, 1, 2, 2), "at most 24 layers; received 25"),
    ((17, 2, 2), "at most 16 heads per layer; received 17 (shape (17, 2, 2)). Save the ones to "
                 "show, e.g. weights[:16]."),
    ((1, 17, 2, 2), "at most 16 heads per layer; received 17"),
    ((1, 1, 65, 2), "at most 64 target rows (n_tgt); received 65"),
    ((1, 1, 2, 65), "at most 64 source columns (n_src); received 65"),
])
def test_each_bound_is_one_past_what_loads(shape, what):
    data = hostile(shape, n_src=min(shape[-1], 64), n_tgt=min(shape[-2], 64))
    (problem,) = problems_of(data)
    assert what in problem


def test_long_tokens_and_texts_are_refused_from_the_headers():
    a = valid_arrays(n_tgt=2, n_src=2)
    a["src_tokens"] = np.array(["x" * 2000, "y"])                    # at the bound: fine
    a["model"] = np.array("m" * 2000)
    assert load_attention(raw_npz(**a)).model == "m" * 2000
    a["tgt_tokens"] = np.array(["x" * 2001, "y"])
    a["src_text"] = np.array("s" * 5000)
    assert problems_of(raw_npz(**a)) == [
        "tgt_tokens may hold tokens of at most 2,000 characters; received dtype <U2001 (up to "
        "2,001).",
        "src_text may be at most 2,000 characters long; received dtype <U5000 (up to 5,000)."]


def test_the_writer_refuses_what_the_reader_would():
    with pytest.raises(AttentionFileError) as info:
        attention_to_bytes(np.full((1, 1, 65), 1 / 65), [str(i) for i in range(65)], ["y"])
    assert info.value.problems == [
        "cross_attention may have at most 64 source columns (n_src); received 65 (shape (1, 1, "
        "65)). The page shows at most 64 tokens a side.",
        "src_tokens may hold at most 64 tokens, as the page shows at most 64 a side; received "
        "65."]

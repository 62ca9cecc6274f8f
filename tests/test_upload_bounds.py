"""The file weights on the page: a hostile upload is refused before anything big is allocated,
a file is read once per upload and kept by its session, and the upload limit is one number."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from apptest_helpers import APP, ROOT, chart, heatmaps
from streamlit.testing.v1 import AppTest

import xattn.ui.weights.upload as upload
from xattn.attention import masked_softmax
from xattn.attnfile import (
    MAX_BYTES,
    AttentionFileError,
    attention_to_bytes,
    load_attention,
)

CONFIG = ROOT / ".streamlit" / "config.toml"


def npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def tokens(n: int) -> np.ndarray:
    return np.array([f"w{i}" for i in range(n)])


# The files: 1000 x 1000 heads of one token each (the server went past 3 GB), 100 x 100
# (4.8 s a click), int8 zeros over 5000 x 10000 tokens (1.6-2.7 GB and a MessageSizeError).
HOSTILE = {
    "1000x1000-heads.npz": npz(cross_attention=np.ones((1000, 1000, 1, 1), np.int8),
                               src_tokens=tokens(1), tgt_tokens=tokens(1)),
    "100x100-heads.npz": npz(cross_attention=np.ones((100, 100, 1, 1), np.int8),
                             src_tokens=tokens(1), tgt_tokens=tokens(1)),
    "5000x10000-tokens.npz": npz(cross_attention=np.zeros((1, 1, 5000, 10000), np.int8),
                                 src_tokens=tokens(10000), tgt_tokens=tokens(5000)),
}


def file_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["weights"] = "file"
    return at.run()


def put(at: AppTest, name: str, data: bytes | None) -> AppTest:
    at.file_uploader(key="upload").set_value(None if data is None else (name, data,
                                                                         "application/zip"))
    return at.run()


def valid(shape=(3, 2, 4, 5), seed=0) -> bytes:
    w = masked_softmax(np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)
    return attention_to_bytes(w, list(tokens(shape[-1])), list(tokens(shape[-2])), model="m")


@pytest.fixture
def reads(monkeypatch):
    """The size of every file the page reads (its ``load_attention`` calls)."""
    calls = []

    def counting(data, **kwargs):
        calls.append(len(data))
        return load_attention(data, **kwargs)

    monkeypatch.setattr(upload, "load_attention", counting)
    return calls


@pytest.mark.parametrize("name", HOSTILE)
def test_a_shape_beyond_the_page_is_refused_with_every_problem_a_line(name):
    at = put(file_page(), name, HOSTILE[name])
    assert not at.exception
    (error,) = at.error
    with pytest.raises(AttentionFileError) as info:
        load_attention(HOSTILE[name])
    n = len(info.value.problems)
    assert name in error.value and f"cannot be shown ({n} problems, one a line" in error.value
    assert at.code[0].value.split("\n") == info.value.problems
    assert all("at most" in line or "once unpacked" in line for line in info.value.problems)
    with pytest.raises(KeyError):
        at.get_by_key("overview_pick")                       # nothing of it is drawn
    assert len(at.get("plotly_chart")) == 0


def test_a_file_is_read_once_per_upload_and_kept_by_its_session(reads):
    at = put(file_page(), "three-layers.npz", valid())
    assert not at.exception and reads == [len(valid())]
    for _ in range(3):                                        # clicks: nothing is read again
        at.run()
    at.query_params["layer"] = "1"
    at.run()
    assert not at.exception and len(reads) == 1
    assert at.session_state[upload.FILE_KEY][1].n_layers == 3
    other = file_page()                                       # another student, the same file
    put(other, "three-layers.npz", valid())
    assert len(reads) == 2                                    # read in their own session
    put(at, "other.npz", valid(seed=1))                       # a new upload is read
    assert len(reads) == 3 and not at.exception
    put(at, "", None)                                         # removed: its weights go too
    assert upload.FILE_KEY not in at.session_state


def test_a_bad_file_is_read_once_too_and_keeps_no_bytes(reads):
    at = put(file_page(), "bad.npz", HOSTILE["100x100-heads.npz"])
    at.run()
    assert len(reads) == 1 and at.error
    problems = at.session_state[upload.FILE_KEY][1]
    assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)


def test_the_upload_limit_is_one_number_in_one_unit():
    at = file_page()
    server_mb = int(re.search(r"^maxUploadSize = (\d+)", CONFIG.read_text(), re.M)[1])
    assert MAX_BYTES % 10**6 == 0
    assert at.file_uploader(key="upload").proto.max_upload_size_mb == MAX_BYTES // 10**6
    assert server_mb == MAX_BYTES // 10**6             # the same number in the config ...
    assert server_mb * 2**20 >= MAX_BYTES             # ... where the server counts MiB
    assert "At most 20 MB" in at.info[0].value
    at = put(at, "big.npz", b"\0" * (MAX_BYTES + 1))
    assert at.code[0].value == ("The file is 20 MB (20,000,001 bytes); the limit is 20 MB "
                                "(20,000,000 bytes).")


def test_the_largest_file_the_page_shows_is_drawn():
    at = put(file_page(), "t5-large.npz", valid((24, 16, 64, 64)))
    assert not at.exception and not at.error
    overview = chart(at, "overview_pick")
    assert len(heatmaps(overview)) == 24 * 16

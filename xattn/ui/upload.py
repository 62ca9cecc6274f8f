"""The file weights: an uploaded .npz of attention weights (``xattn.attnfile``'s format)."""

from __future__ import annotations

import hashlib

import streamlit as st

from xattn.attnfile import MAX_BYTES, AttentionFileError, load_attention
from xattn.literal import md_code
from xattn.sources import Attention, file_attention
from xattn.ui.compute import derived

__all__ = ["file_source"]

FORMAT = ("An `.npz` holding `cross_attention`, shape (layers, heads, target, source) or (heads, "
          "target, source), each row summing to 1 (or all zero), and `src_tokens`, "
          "`tgt_tokens` as strings; optionally `model`, `src_text`, `tgt_text`. The page's own "
          "*Download everything as .npz* button is one; so is `python -m xattn.models export`.")


def file_source(state) -> Attention | None:
    """The uploaded file's weights, or None after saying what is wrong with it (one problem a
    line). The file stays while *file* is the chosen weights."""
    sb = st.sidebar
    sb.header("Attention file")
    upload = sb.file_uploader("Attention weights (.npz)", type=["npz"], key="upload",
                              max_upload_size=MAX_BYTES // 2**20, help=FORMAT)
    if upload is None:
        st.info("Upload a file of attention weights in the sidebar. " + FORMAT,
                icon=":material/upload_file:")
        return None
    data = upload.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    try:
        loaded = derived(("file", digest), lambda: load_attention(data))
    except AttentionFileError as err:
        n = len(err.problems)
        st.error(f"The file {md_code(upload.name)} cannot be shown ({n} "
                 f"problem{'s' if n > 1 else ''}, one a line below). " + FORMAT,
                 icon=":material/error:")
        st.code("\n".join(err.problems), language=None, wrap_lines=True)
        return None
    texts = [f"{side}: {md_code(text)}" for side, text in (("source", loaded.src_text),
                                                            ("target", loaded.tgt_text)) if text]
    if texts:
        st.caption("From the file, " + " · ".join(texts))
    return file_attention(loaded, upload.name, digest)

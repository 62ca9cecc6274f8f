"""The file weights: an uploaded .npz of attention weights (``xattn.attnfile``'s format).

A file is read and checked once per upload and kept by the session that uploaded it
(``st.session_state``), not in the server's shared caches: it is nobody else's, a rerun (any
click) must not read it again, and its memory goes with the session. A session holds at most
one file: the upload's bytes, kept by Streamlit while the file is in the uploader (at most
``MAX_BYTES``), and the checked weights (at most 24 x 16 x 64 x 64 float32, 6.3 MB).

The size limit is one number in one unit everywhere: ``attnfile.MAX_BYTES`` is 20 MB in decimal
megabytes (20,000,000 bytes), the uploader is told 20 (the browser counts its megabytes as
10**6 bytes, 2**20 on Windows), and the server's ``server.maxUploadSize = 20`` in
``.streamlit/config.toml`` (Streamlit's server counts 2**20) lets every such file through. A
file between the two (Windows only) is refused by the reader, which says both sizes.
"""

from __future__ import annotations

import streamlit as st

from xattn._safenpz import size_text
from xattn.attnfile import (
    MAX_BYTES,
    MAX_HEADS,
    MAX_LAYERS,
    MAX_TOKENS,
    AttentionFile,
    AttentionFileError,
    load_attention,
)
from xattn.literal import md_code
from xattn.sources import Attention, file_attention
from xattn.ui.i18n import N_, ngettext
from xattn.ui.i18n import gettext as _

__all__ = ["file_source", "format_text", "FORMAT", "LIMITS", "FILE_KEY", "UPLOAD_MB"]

UPLOAD_MB = MAX_BYTES // 10**6      # what the uploader is told, in its megabytes
FILE_KEY = "_xattn_file"            # session state: (file_id, AttentionFile or problems)
# The file's limits and format as messages (said in the page's language by `format_text`);
# LIMITS and FORMAT are their English.
_LIMITS = N_("At most {size}, {layers} layers × {heads} heads and {tokens} tokens a side (the "
             "page shows no more).")
_SIZES = dict(size=size_text(MAX_BYTES), layers=MAX_LAYERS, heads=MAX_HEADS, tokens=MAX_TOKENS)
_FORMAT = N_("An `.npz` holding `cross_attention`, shape (layers, heads, target, source) or "
             "(heads, target, source), each row summing to 1 (or all zero), and `src_tokens`, "
             "`tgt_tokens` as strings; optionally `model`, `src_text`, `tgt_text`. {limits} The "
             "page's own *Download everything as .npz* button is one; so is `python -m "
             "xattn.torch_models export`.")
LIMITS = _LIMITS.format(**_SIZES)
FORMAT = _FORMAT.format(limits=LIMITS)


def format_text() -> str:
    """`FORMAT` in the page's language."""
    return _(_FORMAT, limits=_(_LIMITS, **_SIZES))


def _checked(upload) -> AttentionFile | list[str]:
    """The upload's checked contents (or its problems), read once per upload: later reruns of
    this session find them in its state."""
    held = st.session_state.get(FILE_KEY)
    if held is None or held[0] != upload.file_id:
        try:
            result: AttentionFile | list[str] = load_attention(upload.getvalue())
        except AttentionFileError as err:
            result = err.problems     # not the error: its traceback would hold the bytes
        held = (upload.file_id, result)
        st.session_state[FILE_KEY] = held
    return held[1]


def file_source(state) -> Attention | None:
    """The uploaded file's weights, or None after saying what is wrong with it (one problem a
    line). The file stays while *file* is the chosen weights."""
    sb = st.sidebar
    sb.header(_("Attention file"))
    upload = sb.file_uploader(_("Attention weights (.npz)"), type=["npz"], key="upload",
                              max_upload_size=UPLOAD_MB, help=format_text())
    if upload is None:
        st.session_state.pop(FILE_KEY, None)
        st.info(_("Upload a file of attention weights in the sidebar.") + " " + format_text(),
                icon=":material/upload_file:")
        return None
    loaded = _checked(upload)
    if isinstance(loaded, list):
        n = len(loaded)
        st.error(ngettext("The file {name} cannot be shown ({n} problem, one a line below).",
                          "The file {name} cannot be shown ({n} problems, one a line below).",
                          n, name=md_code(upload.name)) + " " + format_text(),
                 icon=":material/error:")
        st.code("\n".join(loaded), language=None, wrap_lines=True)
        return None
    texts = [f"{side}: {md_code(text)}" for side, text in ((_("source"), loaded.src_text),
                                                            (_("target"), loaded.tgt_text))
             if text]
    if texts:
        st.caption(_("From the file,") + " " + " · ".join(texts))
    return file_attention(loaded, upload.name)

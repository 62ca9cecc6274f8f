"""Every URL parameter the page understands, in one table that exists before any widget.

A link is read once, when a session starts, before any control is drawn; every parameter it
may carry is declared here, so the first session of a fresh server process (the normal case
behind a load balancer) knows them all, whichever view or weights it opens. Controls look
their parameter up by its object (``state.value(HEADS, ...)``, ``key=HEADS.key``), never by
a string of their own.
"""

from __future__ import annotations

import re

from xattn.embedder import EMBEDDER_MODES
from xattn.lesson import MAX_ROOM_STEPS
from xattn.live.params import (
    Param,
    Why,
    bool_param,
    choice_param,
    float_param,
    int_param,
    list_param,
    text_param,
    whole_number,
)
from xattn.locales import LANGS
from xattn.masks import MASK_MODES
from xattn.pipeline import D_MODEL_CHOICES, MAX_HEADS, MAX_TOKENS, Settings
from xattn.sources import SOURCES
from xattn.tokenize import TOKENIZER_MODES

__all__ = ["REGISTRY", "VIEW_NAMES", "LOCAL_KEYS", "token_label", "parse_label",
           "lesson_setting", "lesson_model", "NOT_IN_LESSONS", "MAX_HOMEWORK_DAYS"]

DEFAULTS = Settings()
MAX_CHARS = 2000       # per sentence: 64 tokens of up to ~30 characters
MAX_SEED = 2**31 - 1   # the seed box's range; the library takes seeds up to 2**63 - 1
VIEW_NAMES = ("Lesson", "Heads", "Step through", "Head statistics", "Switch heads off", "Lines",
              "Compare", "Decode", "Alignment", "Training", "Export", "How to read this")
_LABEL = re.compile(r"(\d{1,4}): (.*)", re.S)
# Widgets deliberately left out of the link: a student's own prediction is not shared, and
# *Start a class*'s choices become an action's link when its button is pressed (class=new&...).
LOCAL_KEYS = frozenset({"predict", "join", "decode_play", "force_pick", "force_typed",
                        "gold_upload", "gold_format", "gold_first", "gold_order",
                        "class_mode", "homework_days", "class_lang", "room_lang", "time_rows",
                        "dtw_heads"})


def token_label(position: int, token: str) -> str:
    """How a link and a picker name one token: ``"6: mat"`` (positions from 0)."""
    return f"{position}: {token}"


def parse_label(text: str) -> tuple[int, str]:
    """``"6: mat"`` to ``(6, "mat")``; ValueError (completing "which ...") otherwise."""
    match = _LABEL.fullmatch(text)
    if not match:
        raise ValueError(Why("is not of the form `position: token` (e.g. `6: mat`)"))
    return int(match.group(1)), match.group(2)


def _label(text: str) -> str:
    parse_label(text)
    return text


# --- the page -------------------------------------------------------------------------------
VIEW = choice_param("view", "Heads", VIEW_NAMES, "the view")
WEIGHTS = choice_param("weights", "random", SOURCES, "the weights")
LAYER = int_param("layer", 0, 1, 99, "the layer")       # 0: "not chosen" (see layer_control)
LESSON = int_param("lesson", 1, 1, MAX_ROOM_STEPS, "the lesson step")
# One of the server's lessons by name ("": the default); a class's room keeps its own
COURSE = text_param("course", "", 100, "the lesson")

# --- random weights: sentences, projections, tokens to vectors, masking ----------------------
SRC = text_param("src", DEFAULTS.src, MAX_CHARS, "the source sentence")
TGT = text_param("tgt", DEFAULTS.tgt, MAX_CHARS, "the target sentence")
D_MODEL = int_param("d_model", DEFAULTS.d_model, 1, max(D_MODEL_CHOICES), "d_model")
HEADS = int_param("heads", DEFAULTS.n_heads, 1, MAX_HEADS, "the number of heads")
SEED = int_param("seed", DEFAULTS.seed, 0, MAX_SEED, "the seed")
TOK = choice_param("tok", DEFAULTS.tokenizer, TOKENIZER_MODES, "the tokenizer")
EMB = choice_param("emb", DEFAULTS.embedder, EMBEDDER_MODES, "the embedder")
POS = bool_param("pos", DEFAULTS.positional, "positional encoding")
MASK = choice_param("mask", DEFAULTS.mask_mode, MASK_MODES, "the mask")
PAD = list_param("pad", _label, what="the masked source tokens")
K = int_param("k", DEFAULTS.wait_k, 1, MAX_TOKENS, "k")
WINDOW = int_param("window", DEFAULTS.window, 0, 16, "the window")

# --- trained weights: the toy task ----------------------------------------------------------
TR_MAX_CHARS = 300
TR_MAX_SEED = 999      # bounded: every seed is one stored run of about 100 kB
TR_HEAD_CHOICES = (1, 2, 4, 8)
TR_STEP_CHOICES = (25, 50, 100, 200, 400)
TR_SRC = text_param("tr_src", "the red cat sees the dog", TR_MAX_CHARS, "the English sentence")
TR_TGT = text_param("tr_tgt", "", TR_MAX_CHARS, "the French sentence")
TR_HEADS = int_param("tr_heads", 4, 1, 8, "the number of heads")
TR_STEPS = int_param("tr_steps", 100, 1, 400, "the number of training steps")
TR_SEED = int_param("tr_seed", 0, 0, TR_MAX_SEED, "the training seed")

# --- a real model ---------------------------------------------------------------------------
MODEL = text_param("model", "", 300, "the model")          # "": the first allowed
WORDS = bool_param("words", True, "whole words")
SINKS = bool_param("sinks", False, "hiding sink tokens")

# --- a class in a room (xattn.ui.room.room) ------------------------------------------------------
CLASS = choice_param("class", "", ("new",), "a new class")   # an action: never written back
# With class=new, a homework open this many days instead of a live class (0: live); an action
# (the class store bounds it again: Limits.homework_seconds)
MAX_HOMEWORK_DAYS = 30
HOMEWORK = int_param("homework", 0, 1, MAX_HOMEWORK_DAYS, "the days the homework is open")
ROOM = text_param("room", "", 40, "the class code")
HOST = text_param("host", "", 100, "the host key")           # traded for a cookie at once
# A one-time device code (*Your devices*): an action, traded for the host key, never written
DEVICE = text_param("device", "", 40, "the device code")
# A student's full page of the class's step (without it, ?room=CODE is the phone's own page,
# answered before Streamlit: xattn/server/phone.py)
EXPLORE = choice_param("explore", "", ("1",), "the full page of the class's step")

# --- how the page looks ---------------------------------------------------------------------
IMG = choice_param("img", "png", ("png", "svg"), "the image format")
SCALE = choice_param("scale", "fixed", ("fixed", "max"), "the colour scale")
PRESENT = bool_param("present", False, "presenter mode")
# the page's language (xattn/ui/i18n.py): the link carries it only when it is not the browser's
LANG = choice_param("lang", "en", LANGS, "the page's language")

# --- the views ------------------------------------------------------------------------------
HPAGE = int_param("hpage", 1, 1, 16, "the page of heads")
FOCUS = int_param("focus", 0, 0, 16, "the head opened")  # 0: none (from 1 otherwise)
STEP_HEAD = int_param("step_head", 1, 1, MAX_HEADS, "the head")
STEP_TGT = text_param("step_tgt", "", 200, "the target token")  # default: the first
STEP_SRC = text_param("step_src", "", 200, "the source token")  # default: none marked
SQRT = bool_param("sqrt", True, "the division by √d_head")
OFF = list_param("off", whole_number(1, MAX_HEADS), what="the heads switched off")
LINES_HEADS = list_param("lines_heads", whole_number(1, MAX_HEADS), what="the heads to draw")
THRESHOLD = float_param("threshold", 0.05, 0.0, 0.5, "the threshold")
CMP_CHOICES = ("heads", "layer", "random", "seed", "trained", "untrained")
CMP = choice_param("cmp", "", CMP_CHOICES, "B")
# -1: "not chosen", replaced by a default that depends on A (see xattn.ui.views.compare)
CMP_SEED = int_param("cmp_seed", -1, 0, MAX_SEED, "the seed of B")
CMP_HEADS = int_param("cmp_heads", -1, 1, MAX_HEADS, "the heads of B")
CMP_LAYER = int_param("cmp_layer", -1, 1, 99, "the layer of B")
TSTEP = int_param("tstep", -1, 0, 1000, "the training snapshot")   # -1: the last
DSTEP = int_param("dstep", -1, 0, 1000, "the decoder step")          # -1: the last
FORCE = list_param("force", _label, what="the forced tokens")         # "3: chien"
READS = bool_param("reads", False, "reading a word's alignment at the step after it")
AL_METHOD = choice_param("links", "target_argmax",
                         ("target_argmax", "source_argmax", "intersection", "threshold"),
                         "how weights become links")
AL_THRESHOLD = float_param("link_min", 0.3, 0.01, 0.99, "the link threshold")
AL_GOLD = choice_param("gold", "corpus", ("corpus", "file"), "the gold alignment")


def _table() -> dict[str, Param]:
    params = [v for v in globals().values() if isinstance(v, Param)]
    keys = [p.key for p in params]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"URL parameters declared twice: {twice}.")
    return {p.key: p for p in params}


REGISTRY: dict[str, Param] = _table()


# What a lesson's step may not set: where and how the page is shown, and the class it is in.
NOT_IN_LESSONS = frozenset(p.key for p in (LESSON, COURSE, CLASS, HOMEWORK, ROOM, HOST, DEVICE,
                                           EXPLORE, IMG, SCALE, PRESENT, LANG))
# Settings whose controls offer fewer values than their link takes.
_OFFERED = {TR_HEADS.key: TR_HEAD_CHOICES, TR_STEPS.key: TR_STEP_CHOICES,
            D_MODEL.key: D_MODEL_CHOICES}


def lesson_setting(key: str, value):
    """One setting of a lesson step's page (``[step.page]`` of a lesson file) as the page
    holds it; ValueError saying what it expects otherwise. A value is read as the link reads
    it (``heads = 4`` as ``heads=4``), so a lesson sets exactly what a link can."""
    if key not in REGISTRY or key in NOT_IN_LESSONS:
        known = sorted(k for k in REGISTRY if k not in NOT_IN_LESSONS)
        raise ValueError(f"expected one of the page's settings ({', '.join(known)}), found "
                         f"{key!r}")
    p = REGISTRY[key]
    if isinstance(value, list) and p.multi:
        texts = value
    elif isinstance(value, bool):
        texts = ["true" if value else "false"]
    elif isinstance(value, (str, int, float)) and not p.multi:
        texts = [str(value)]
    else:
        raise ValueError(f"expected {'a list of texts' if p.multi else 'one value'} for "
                         f"{p.what}, found {value!r}")
    if isinstance(value, bool) and p.default not in (True, False):
        raise ValueError(f"expected {p.what}, not true or false, found {value!r}")
    if not all(isinstance(t, str) for t in texts):
        raise ValueError(f"expected texts for {p.what}, found {value!r}")
    if p.max_chars is not None and any(len(t) > p.max_chars or not t.isprintable()
                                       for t in texts):
        raise ValueError(f"expected {p.what} of at most {p.max_chars:,} characters on one "
                         f"line, found {len(texts[0]):,} characters")
    for text in texts if p.multi else ():
        try:
            p.parse(text)
        except ValueError as err:
            wanted = str(err).replace("`", "").removeprefix("is not ")
            raise ValueError(f"expected {p.what}, each {wanted}, found {text!r}") from None
    parsed, problem = p.read(texts)
    if problem:
        wanted = str(problem).replace("`", "").removeprefix("is not ").removeprefix("holds ")
        raise ValueError(f"expected {wanted} ({p.what}), found {value!r}")
    if key in _OFFERED and parsed not in _OFFERED[key]:
        raise ValueError(f"expected {p.what} among {', '.join(map(str, _OFFERED[key]))}, found "
                         f"{value!r}")
    if key == MODEL.key and parsed:
        return lesson_model(parsed)
    return parsed


def lesson_model(name: str) -> str:
    """The server's model a lesson names: a name on its list (``XATTN_MODELS``), or the last
    part of one (``opus-mt-en-de`` is ``/srv/models/opus-mt-en-de`` or
    ``Helsinki-NLP/opus-mt-en-de``, whichever this server lists first); ValueError naming the
    list otherwise. A lesson so runs on every server that has the model, wherever its folder."""
    from xattn.backends import offered_models

    offered = offered_models()
    if name in offered:
        return name
    tail = name.rstrip("/").rsplit("/", 1)[-1]
    found = [m for m in offered if m.rstrip("/").rsplit("/", 1)[-1] == tail]
    if not found:
        raise ValueError(f"expected a model this server offers ({', '.join(offered)}; the "
                         f"deployer adds models with XATTN_MODELS), found {name!r}")
    return found[0]

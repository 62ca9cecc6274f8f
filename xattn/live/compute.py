"""The page's computations, cached once per server and bounded by bytes.

Every student's session runs in a thread of one server process, so a setting one student opened
is free for the next. The caches hold results shared by reference (read-only arrays), are keyed
on small values (strings, ints, the frozen ``Settings``), never on arrays, and are bounded by
the memory their values hold (``xattn.cache.ByteLRU``), because entry counts do not bound memory:
a default run holds 10 kB, one of 16 heads over two 64-token sentences at d_model 512 holds
1.3 MB. The budget of the whole server is in docs/performance.md ("Memory").
"""

from __future__ import annotations

import numpy as np

from xattn.cache import ByteLRU
from xattn.figures.frozen import FrozenFigure, freeze
from xattn.live.process import process_wide
from xattn.pipeline import Run, Settings, run
from xattn.tokenize import tokenize

__all__ = ["cached_run", "tokens_of", "derived", "figure", "CACHE_BYTES", "caches",
           "clear_caches"]

CACHE_BYTES = {
    "runs": 160 << 20,      # Run per Settings: ~120 of the largest (1.3 MB), thousands of small
    "tokens": 8 << 20,      # token lists per (text, tokenizer)
    "derived": 32 << 20,    # per-view results derived from a run (traces, curves, statistics)
    "figures": 32 << 20,    # built figures (Plotly's dicts), ~20 kB a small heatmap
}


@process_wide()
def caches() -> dict[str, ByteLRU]:
    """The server's caches, shared by every session (each is thread-safe)."""
    return {name: ByteLRU(size) for name, size in CACHE_BYTES.items()}


def _read_only(r: Run) -> Run:
    for name in ("encoder_output", "decoder_state", "mask", "weights", "output"):
        getattr(r, name).flags.writeable = False   # shared by every session: never modified
    return r


def cached_run(settings: Settings) -> Run:
    """``xattn.pipeline.run(settings)``, computed once per server; ValueError as ``run``."""
    return caches()["runs"].get_or_make(settings, lambda: _read_only(run(settings)))


def tokens_of(text: str, mode: str) -> tuple[str, ...]:
    """``xattn.tokenize(text, mode)`` as a tuple, cached (the padding picker needs the tokens
    on every rerun, before the run itself is computed)."""
    return caches()["tokens"].get_or_make((text, mode), lambda: tuple(tokenize(text, mode)))


def derived(key: tuple, make):
    """A value derived from a run (e.g. a step-through trace), cached under ``key``."""
    value = caches()["derived"].get_or_make(key, make)
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    return value


def figure(key: tuple, make) -> FrozenFigure:
    """The figure ``make()`` builds (a ``go.Figure``, or already frozen), built and converted
    once per server under ``key``.

    A rerun that draws an unchanged chart (another student's click, a widget elsewhere on the
    page) then skips Plotly's object tree, deep copy and encoding: see
    ``xattn.figures.frozen``. ``key`` must hold everything the figure depends on; an empty
    key (weights of unknown origin) builds the figure every time.
    """
    def made() -> FrozenFigure:
        fig = make()
        return fig if isinstance(fig, FrozenFigure) else freeze(fig)
    if not key or not key[0]:
        return made()
    return caches()["figures"].get_or_make(key, made)


def clear_caches() -> None:
    """Empty the computation caches (tests and benchmarks: a cold start)."""
    for cache in caches().values():
        cache.clear()

"""Which back end runs a model name, and loading it: the one door for names from a link.

A back end is one row of `BACKENDS`: which names it runs, how it loads one, which packages it
needs and whether it downloads. The first installed row that runs a name loads it: a folder
the NumPy models read runs in NumPy, anything else through transformers where it is
installed. A loaded
model is a ``xattn.translator.Translator`` whatever its back end; nothing outside this module
asks which back end made it. A new back end is one module and one row here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from xattn.encdec import SHIPPED_FOLDER, SHIPPED_MODEL, load_encdec, runs_here
from xattn.torch_models import load_model, missing_packages, use_threads
from xattn.translator import ModelUnavailable, Translator, allowed_models, check_allowed

__all__ = ["BACKENDS", "Backend", "backend_for", "load_translator", "offered_models",
           "files_now"]


@dataclass(frozen=True)
class Backend:
    """One way to run a translation model.

    Attributes
    ----------
    name : str
    reads : callable (name) -> bool
        Whether this back end runs ``name``.
    load : callable (name, allowed) -> Translator
        Applies the allow-list (``xattn.translator.check_allowed``).
    missing : callable () -> str or None
        What must be installed first, in one line, or None.
    downloads : bool
        Whether a name may be fetched the first time (from the Hugging Face hub).
    """

    name: str
    reads: Callable[[str], bool]
    load: Callable[..., Translator]
    missing: Callable[[], str | None]
    downloads: bool


def _numpy(name: str, allowed=None) -> Translator:
    return load_encdec(name, allowed=allowed)


def _transformers(name: str, allowed=None) -> Translator:
    # One torch thread per pass: a class's sessions run side by side (bench_models.py).
    use_threads(1)
    return load_model(name, allowed=allowed)


BACKENDS = (
    Backend("numpy", runs_here, _numpy, lambda: None, downloads=False),
    Backend("transformers", lambda name: True, _transformers, missing_packages, downloads=True),
)


def backend_for(name: str) -> Backend | None:
    """The first installed back end that runs ``name``; None when none can."""
    return next((b for b in BACKENDS if b.missing() is None and b.reads(name)), None)


def offered_models() -> list[str]:
    """The models a link may pick: the shipped one first, then the allow-list's names that
    some installed back end can run."""
    from xattn.media import SHIPPED_MEDIA, media_kind  # speech and image run here in NumPy

    shipped = [SHIPPED_MODEL, *SHIPPED_MEDIA]
    return shipped + [n for n in allowed_models() if n not in shipped and (
        media_kind(n) is not None or backend_for(n) is not None)]


def load_translator(name: str, *, allowed=None) -> Translator:
    """Load ``name`` (on the allow-list, or the shipped model) with the back end that runs it.

    Raises
    ------
    TypeError, ValueError
        Not a string, not allowed, or a folder its back end refuses (said in one line).
    xattn.translator.ModelUnavailable
        No installed back end runs it, or its packages or the network are missing.
    """
    check_allowed(name, allowed, always=(SHIPPED_MODEL,))
    backend = backend_for(name)
    if backend is None:
        raise ModelUnavailable(missing_packages() or f"no back end here runs {name[:80]!r}.")
    return backend.load(name, allowed)


def files_now(name: str) -> tuple | None:
    """What the files of model ``name``'s folder are now (each file's name, size, inode and
    modification time): a model loaded before its files changed on disk (new weights copied
    over old, or renamed into place) differs. None for a name that is no folder here."""
    from xattn.media import media_folder

    folder = SHIPPED_FOLDER if name == SHIPPED_MODEL else media_folder(name)
    try:
        with os.scandir(folder) as entries:
            return tuple(sorted((e.name, st.st_size, st.st_ino, st.st_mtime_ns)
                                for e in entries if e.is_file()
                                for st in (e.stat(),)))
    except (OSError, TypeError, ValueError):
        return None

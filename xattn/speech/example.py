"""A built-in clip, synthesised in code (no file, no download): "words" of tones whose
boundaries are known exactly, for the page's audio example and the alignment lab for time.

Each word is a chord of two sine tones with a short fade in and out (``xattn.speech.tones``'s
``tone_word``, the toy model's tones sounded together), separated by silence::

    clip = tone_clip(("low", "high", "mid"))
    clip.samples            # float32 at 16 kHz
    clip.words[1]           # WordTiming(word='high', start=0.65, end=1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int
from xattn.speech.tones import FADE_SECONDS, tone_word

__all__ = ["TONES", "WordTiming", "Clip", "tone_clip", "EXAMPLE_WORDS"]

# word: its two frequencies (Hz)
TONES = {"low": (220.0, 330.0), "mid": (440.0, 660.0), "high": (880.0, 1320.0),
         "buzz": (150.0, 1800.0), "chirp": (600.0, 1000.0)}
EXAMPLE_WORDS = ("low", "high", "mid")


@dataclass(frozen=True)
class WordTiming:
    """One word of a clip and where it is, in seconds from the clip's start."""

    word: str
    start: float
    end: float

    @property
    def middle(self) -> float:
        return (self.start + self.end) / 2


@dataclass(frozen=True, eq=False)
class Clip:
    """Mono samples at ``rate`` Hz and, where known, each word's timing."""

    samples: np.ndarray
    rate: int
    words: tuple[WordTiming, ...] | None = None

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate


def tone_clip(words=EXAMPLE_WORDS, *, rate: int = 16000, word_seconds: float = 0.35,
              gap_seconds: float = 0.15, lead_seconds: float = 0.15) -> Clip:
    """A clip of tone words with their exact timings.

    Raises
    ------
    ValueError
        An unknown word (``TONES`` names them), no words, or durations out of range.
    """
    rate = check_int(rate, "rate", minimum=1000, maximum=192_000)
    words = tuple(words)
    if not words or len(words) > 40:
        raise ValueError(f"words must hold 1 to 40 words; received {len(words)}.")
    unknown = [w for w in words if w not in TONES]
    if unknown:
        raise ValueError(f"unknown tone word {unknown[0]!r}; expected one of "
                         f"{', '.join(TONES)}.")
    for name, v in (("word_seconds", word_seconds), ("gap_seconds", gap_seconds),
                    ("lead_seconds", lead_seconds)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 5:
            raise ValueError(f"{name} must be a number of seconds from 0 to 5; received "
                             f"{v!r}.")
    if word_seconds < 2 * FADE_SECONDS:
        raise ValueError(f"word_seconds must be at least {2 * FADE_SECONDS} s (its fades); "
                         f"received {word_seconds}.")
    n_word = int(round(word_seconds * rate))
    timings, pieces, at = [], [np.zeros(int(round(lead_seconds * rate)))], lead_seconds
    for w in words:
        pieces.append(0.5 * tone_word(TONES[w], n_word, rate, chord=True))
        timings.append(WordTiming(w, round(at, 6), round(at + n_word / rate, 6)))
        at += n_word / rate
        pieces.append(np.zeros(int(round(gap_seconds * rate))))
        at += len(pieces[-1]) / rate
    return Clip(np.concatenate(pieces).astype(np.float32), rate, tuple(timings))

"""Spoken-digit-like tone sequences, synthesised in NumPy, with every word's span known exactly.

The toy speech model (``xattn/speech/toy-digits``) was trained on these clips and is scored on
them. Each "word" is one of ten digit names; saying it is playing its two tones one after
the other (a pair of frequencies of its own, 300 Hz to 3 kHz, each half of the word), with
10 ms fades. A clip is 1 to 5 words, word k somewhere in its own slot of 380 ms (k x 0.38 s
to (k + 1) x 0.38 s, so silences between words last 40 to 620 ms), at a random loudness,
with a little white noise, at 16 kHz, never longer than ``SECONDS``::

    clip = tone_clip(np.random.default_rng(0))
    clip.words                  # ('seven', 'two', 'two')
    clip.spans                  # ((0.21, 0.39), ...): seconds where each word sounds
    clip.audio                  # (32000,) float32

Everything random comes from the generator given; the same seed gives the same clips.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int, check_seed

__all__ = ["WORDS", "TONES", "SAMPLING_RATE", "SECONDS", "FADE_SECONDS", "ToneClip", "tone_word",
           "tone_clip", "tone_clips"]

WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_HZ = (300.0, 450.0, 650.0, 900.0, 1250.0, 1700.0, 2300.0, 3000.0)
# Word i's (first, second) tone: ten ordered pairs of distinct frequencies, no two alike.
TONES = tuple((_HZ[a], _HZ[b]) for a, b in
              ((0, 3), (1, 5), (2, 6), (3, 0), (4, 7), (5, 2), (6, 1), (7, 4), (0, 6), (2, 4)))
SAMPLING_RATE = 16_000
SECONDS = 2                    # every clip fits the model's 2-s window (100 positions of 20 ms)
_WORD_S = (0.12, 0.24)         # a word lasts 120 to 240 ms
_SLOT_S = 0.38                 # word k starts and ends within k x 0.38 .. (k + 1) x 0.38 s
_MARGIN_S = 0.02               # the word keeps at least this far from its slot's edges
FADE_SECONDS = 0.01            # each tone word fades in and out over this


@dataclass(frozen=True, eq=False)
class ToneClip:
    """One synthesised clip.

    Attributes
    ----------
    audio : ndarray of shape (n_samples,), float32
        Mono samples at ``SAMPLING_RATE``, at most ``SECONDS`` long, within -1..1.
    words : tuple of str
        The words said, in order (from ``WORDS``).
    spans : tuple of (float, float)
        Each word's (start, end) in seconds, exact: where its tones begin and end.
    """

    audio: np.ndarray
    words: tuple[str, ...]
    spans: tuple[tuple[float, float], ...]

    @property
    def text(self) -> str:
        return " ".join(self.words)

    def __repr__(self) -> str:
        return f"ToneClip({self.text!r}, {len(self.audio) / SAMPLING_RATE:.2f} s)"


def tone_word(hz: tuple[float, float], n: int, rate: int = SAMPLING_RATE, *,
              chord: bool = False) -> np.ndarray:
    """A tone word: two tones over ``n`` samples at ``rate`` Hz, faded in and out over 10 ms,
    float64 of peak at most 1 (``xattn.speech.example``'s words are chords of theirs).

    One after the other (each half the word, the phase continuous at the join: the toy
    model's words), or together (``chord``: the mean of the two, the page's example).
    """
    k = np.arange(n)
    if chord:
        wave = 0.5 * (np.sin(2 * np.pi * hz[0] * k / rate) + np.sin(2 * np.pi * hz[1] * k / rate))
    else:
        phase = 2 * np.pi * np.cumsum(np.where(k < n // 2, hz[0], hz[1])) / rate
        wave = np.sin(phase)                                           # continuous at the join
    fade = int(FADE_SECONDS * rate)
    return wave * np.minimum(1.0, np.minimum(k + 1, n - k) / fade)


def tone_clip(rng: np.random.Generator, *, max_words: int = 5) -> ToneClip:
    """One clip of 1 to ``max_words`` words, drawn with ``rng``.

    Raises
    ------
    TypeError
        ``rng`` is not a ``numpy.random.Generator``.
    ValueError
        ``max_words`` is not 1 to 5 (more would not fit the 2-s window).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; received "
                        f"{type(rng).__name__}. Build one with np.random.default_rng(seed).")
    check_int(max_words, "max_words", minimum=1, maximum=5)
    n_words = int(rng.integers(1, max_words + 1))
    ids = rng.integers(0, len(WORDS), n_words)
    lengths = rng.uniform(*_WORD_S, n_words)
    offsets = _MARGIN_S + rng.uniform(0.0, 1.0, n_words) * (_SLOT_S - 2 * _MARGIN_S - lengths)
    loudness, noise = rng.uniform(0.2, 0.8), rng.uniform(0.001, 0.02)
    audio = noise * rng.standard_normal(SECONDS * SAMPLING_RATE)
    spans, at = [], 0
    for k, (word, length, offset) in enumerate(zip(ids, lengths, offsets, strict=True)):
        start = int(round((k * _SLOT_S + offset) * SAMPLING_RATE))
        n = int(round(length * SAMPLING_RATE))
        audio[start:start + n] += loudness * tone_word(TONES[int(word)], n)
        spans.append((start / SAMPLING_RATE, (start + n) / SAMPLING_RATE))
        at = start + n
    end = min(len(audio), at + int(rng.uniform(0.05, 0.3) * SAMPLING_RATE))
    return ToneClip(np.clip(audio[:end], -1, 1).astype(np.float32),
                    tuple(WORDS[int(i)] for i in ids), tuple(spans))


def tone_clips(n: int, seed: int) -> list[ToneClip]:
    """``n`` clips from ``np.random.default_rng(seed)``: the same list for the same seed.

    Examples
    --------
    >>> [c.text for c in tone_clips(2, 0)] == [c.text for c in tone_clips(2, 0)]
    True
    """
    check_int(n, "n", minimum=0, maximum=100_000)
    rng = np.random.default_rng(check_seed(seed))
    return [tone_clip(rng) for _ in range(n)]

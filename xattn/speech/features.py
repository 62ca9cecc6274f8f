"""Whisper's log-mel front end in NumPy: audio samples to the (n_mels, 3000) features the
encoder reads, equal to transformers' ``WhisperFeatureExtractor`` (its NumPy path,
``transformers.audio_utils.spectrogram``) within float32.

The recipe, as OpenAI's ``whisper/audio.py`` and transformers write it::

    audio   : float32 samples at 16 kHz, cut or padded with zeros to 30 s (480,000 samples)
    frames  : reflect-pad 200 samples each side, a 400-sample periodic Hann window every 160
    power   : |rfft(frame)|^2 over 201 bins (the spectrum rounded to complex64, as
              transformers stores it), the last frame dropped: 3000 frames
    mel     : slaney-normed triangular filters on the slaney mel scale, 0 to 8 kHz
    log     : log10(max(mel, 1e-10)), clamped to (its max - 8), then (x + 4) / 4

Frames are taken as strided views and transformed a block at a time, so the temporaries stay a
few MB whatever the clip; sizes come from a folder's ``preprocessor_config.json``
(``FrontEnd.from_folder``) or Whisper's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xattn._checks import as_finite, check_int
from xattn.encdec.files import present, read_json

__all__ = ["FrontEnd", "mel_filters", "log_mel"]

_PREPROCESSOR_BYTES = 1 << 20      # a preprocessor_config.json is a few kB
_BLOCK = 512                       # frames transformed at a time: 512 x 400 float64 = 1.6 MB
_MAX_MELS = 256                    # whisper-large-v3 has 128


@dataclass(frozen=True)
class FrontEnd:
    """The front end's sizes (``preprocessor_config.json``'s names).

    Attributes
    ----------
    feature_size : int
        Mel bins (80; 128 for large-v3); must equal the model's ``num_mel_bins``.
    sampling_rate : int
        Samples per second of the audio it reads (16,000).
    n_fft, hop_length : int
        Window (400 samples, 25 ms) and step (160 samples, 10 ms) of the spectrogram.
    chunk_length : int
        Seconds every clip is cut or padded to (30): ``n_frames`` = 3000 frames.
    """

    feature_size: int = 80
    sampling_rate: int = 16000
    n_fft: int = 400
    hop_length: int = 160
    chunk_length: int = 30

    def __post_init__(self) -> None:
        check_int(self.feature_size, "feature_size", minimum=1, maximum=_MAX_MELS)
        check_int(self.sampling_rate, "sampling_rate", minimum=1000, maximum=192_000)
        check_int(self.n_fft, "n_fft", minimum=2, maximum=1 << 14)
        check_int(self.hop_length, "hop_length", minimum=1, maximum=self.n_fft)
        check_int(self.chunk_length, "chunk_length", minimum=1, maximum=60)

    @property
    def n_samples(self) -> int:
        return self.chunk_length * self.sampling_rate

    @property
    def n_frames(self) -> int:
        return self.n_samples // self.hop_length

    @classmethod
    def from_folder(cls, folder) -> FrontEnd:
        """The sizes of ``folder/preprocessor_config.json`` (bounded JSON), else defaults.

        Raises
        ------
        ValueError
            A field of the wrong type or out of range, named.
        """
        path = Path(folder) / "preprocessor_config.json"
        if not present(path):
            return cls()
        data = read_json(path, _PREPROCESSOR_BYTES)
        kwargs = {}
        for name in ("feature_size", "sampling_rate", "n_fft", "hop_length", "chunk_length"):
            if name in data:
                try:
                    kwargs[name] = check_int(data[name], name)
                except TypeError as err:
                    raise ValueError(f"preprocessor_config.json: {err}") from None
        try:
            return cls(**kwargs)
        except ValueError as err:
            raise ValueError(f"preprocessor_config.json: {err}") from None


def _hertz_to_mel(hz: np.ndarray) -> np.ndarray:
    """Slaney's mel scale: linear below 1 kHz (3 mels per 200 Hz), logarithmic above."""
    mels = 3.0 * hz / 200.0
    log = hz >= 1000.0
    mels[log] = 15.0 + np.log(hz[log] / 1000.0) * (27.0 / np.log(6.4))
    return mels


def _mel_to_hertz(mels: np.ndarray) -> np.ndarray:
    hz = 200.0 * mels / 3.0
    log = mels >= 15.0
    hz[log] = 1000.0 * np.exp(np.log(6.4) / 27.0 * (mels[log] - 15.0))
    return hz


def mel_filters(n_mels: int, n_fft: int = 400, sampling_rate: int = 16000) -> np.ndarray:
    """Slaney-normed triangular mel filters from 0 Hz to 8 kHz, as librosa and transformers'
    ``mel_filter_bank(..., norm="slaney", mel_scale="slaney")`` make them.

    Returns
    -------
    ndarray of shape (n_fft // 2 + 1, n_mels), float64

    Examples
    --------
    >>> mel_filters(80).shape
    (201, 80)
    """
    edges = _mel_to_hertz(np.linspace(_hertz_to_mel(np.array([0.0]))[0],
                                      _hertz_to_mel(np.array([8000.0]))[0], n_mels + 2))
    bins = np.linspace(0, sampling_rate // 2, n_fft // 2 + 1)              # (n_bins,)
    slopes = edges[None, :] - bins[:, None]                               # (n_bins, n_mels + 2)
    width = np.diff(edges)                                                # (n_mels + 1,)
    down = -slopes[:, :-2] / width[:-1]                                   # (n_bins, n_mels)
    up = slopes[:, 2:] / width[1:]
    filters = np.maximum(0.0, np.minimum(down, up))
    filters *= 2.0 / (edges[2:n_mels + 2] - edges[:n_mels])               # equal energy
    return filters


def _mel_power(audio: np.ndarray, front: FrontEnd) -> np.ndarray:
    """Mel filters times |STFT|^2 of the centred frames, (n_mels, n_frames + 1), float64,
    a block of frames at a time (the whole spectrum is never held)."""
    filters = mel_filters(front.feature_size, front.n_fft, front.sampling_rate).T  # (mels, bins)
    padded = np.pad(audio, front.n_fft // 2, mode="reflect")              # float32 samples
    window = np.hanning(front.n_fft + 1)[:-1]                              # periodic Hann
    frames = np.lib.stride_tricks.sliding_window_view(padded, front.n_fft)[::front.hop_length]
    mel = np.empty((front.feature_size, len(frames)))                      # (n_mels, n_frames)
    for start in range(0, len(frames), _BLOCK):
        block = frames[start:start + _BLOCK] * window                      # (b, n_fft) float64
        spectrum = np.fft.rfft(block).astype(np.complex64)                 # (b, n_bins)
        power = np.abs(spectrum, dtype=np.float64) ** 2                    # (b, n_bins)
        mel[:, start:start + _BLOCK] = filters @ power.T                   # (n_mels, b)
    return mel


def log_mel(audio, front: FrontEnd | None = None) -> np.ndarray:
    """The log-mel features of one clip, as Whisper's encoder reads them.

    Parameters
    ----------
    audio : array_like of shape (n_samples,)
        Mono samples at ``front.sampling_rate`` (16 kHz), about -1..1. Longer than
        ``front.chunk_length`` seconds is cut, shorter is padded with silence.
    front : FrontEnd, optional
        Sizes; Whisper's defaults (80 mels) when None.

    Returns
    -------
    ndarray of shape (front.feature_size, front.n_frames), float32
        3000 frames of 10 ms for 30 s.

    Raises
    ------
    ValueError
        Not one-dimensional, empty, or holding NaN or infinity.

    Examples
    --------
    >>> log_mel(np.zeros(16000)).shape
    (80, 3000)
    """
    front = FrontEnd() if front is None else front
    samples = as_finite(audio, "audio", np.float32)
    if samples.ndim != 1 or samples.size == 0:
        raise ValueError(f"audio must be mono samples of shape (n_samples,), at least one; "
                         f"received shape {samples.shape}. Average the channels of a stereo "
                         f"clip first.")
    clip = np.zeros(front.n_samples, np.float32)
    clip[:min(len(samples), front.n_samples)] = samples[:front.n_samples]
    mel = _mel_power(clip, front)                                         # (n_mels, frames+1)
    log_spec = np.log10(np.maximum(mel, 1e-10)).astype(np.float32)[:, :-1]
    log_spec = np.maximum(log_spec, log_spec.max() - np.float32(8.0))
    return (log_spec + np.float32(4.0)) / np.float32(4.0)

"""Whisper's log-mel front end (``xattn.speech.features``) against transformers'
``WhisperFeatureExtractor``: its NumPy path (``audio_utils.spectrogram``) and the torch STFT
its ``__call__`` takes where torch is installed, on sine sweeps, tones and noise shorter than,
equal to and longer than 30 s. The reference tests need transformers (``models_or_skip``);
the rest run anywhere."""

import json

import numpy as np
import pytest
from model_helpers import models_or_skip

from xattn.speech import FrontEnd, log_mel, mel_filters

RATE = 16000


def sweep(seconds: float, seed: int = 0) -> np.ndarray:
    """A sine sweep 100 Hz -> 7 kHz under a little noise, float32 about -0.6..0.6."""
    t = np.arange(int(seconds * RATE)) / RATE
    phase = 2 * np.pi * (100 * t + (6900 / (2 * seconds)) * t ** 2)
    noise = np.random.default_rng(seed).standard_normal(len(t))
    return (0.5 * np.sin(phase) + 0.05 * noise).astype(np.float32)


def noise(seconds: float, seed: int = 1) -> np.ndarray:
    return (0.3 * np.random.default_rng(seed).standard_normal(int(seconds * RATE))) \
        .astype(np.float32)


def tones(seconds: float) -> np.ndarray:
    """Three tones one after another, with silence between: hard zeros, as padding."""
    out = np.zeros(int(seconds * RATE), np.float32)
    third = len(out) // 3
    for i, hz in enumerate((300, 1200, 4000)):
        t = np.arange(third // 2) / RATE
        out[i * third:i * third + len(t)] = 0.4 * np.sin(2 * np.pi * hz * t)
    return out


CLIPS = {"sweep-0.5s": (sweep, 0.5), "sweep-10s": (sweep, 10.0), "noise-30s": (noise, 30.0),
         "tones-30s": (tones, 30.0), "sweep-37s-cut": (sweep, 37.0), "tones-4s": (tones, 4.0)}


@pytest.fixture(scope="module")
def extractors():
    models_or_skip()
    from transformers import WhisperFeatureExtractor

    return {80: WhisperFeatureExtractor(), 128: WhisperFeatureExtractor(feature_size=128)}


@pytest.mark.parametrize("n_mels", [80, 128])
def test_filters_equal_transformers_mel_filter_bank(extractors, n_mels):
    np.testing.assert_allclose(mel_filters(n_mels), extractors[n_mels].mel_filters,
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("clip", list(CLIPS))
def test_equals_the_numpy_path_of_the_feature_extractor(extractors, clip):
    make, seconds = CLIPS[clip]
    audio = make(seconds)
    padded = np.zeros(30 * RATE, np.float32)
    padded[:min(len(audio), len(padded))] = audio[:len(padded)]
    ref = extractors[80]._np_extract_fbank_features(padded[None], "cpu")[0]
    ours = log_mel(audio)
    assert ours.shape == ref.shape == (80, 3000) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, ref, rtol=0, atol=2e-6)


@pytest.mark.parametrize("clip", ["sweep-10s", "noise-30s", "sweep-37s-cut"])
@pytest.mark.parametrize("n_mels", [80, 128])
def test_equals_the_feature_extractor_call_within_float32(extractors, clip, n_mels):
    """``__call__`` pads, cuts and (with torch) takes torch's STFT: float32 rounding apart."""
    make, seconds = CLIPS[clip]
    audio = make(seconds)
    ref = extractors[n_mels](audio, sampling_rate=RATE, return_tensors="np").input_features[0]
    np.testing.assert_allclose(log_mel(audio, FrontEnd(feature_size=n_mels)), ref, rtol=0,
                               atol=1e-4)


def test_a_tone_peaks_in_its_own_mel_bin():
    hz = 1000.0
    t = np.arange(RATE * 2) / RATE
    features = log_mel(np.sin(2 * np.pi * hz * t))
    filters = mel_filters(80)
    bin_of_hz = int(np.argmax(filters[round(hz / (RATE / 400))]))
    assert abs(int(np.argmax(features[:, 50])) - bin_of_hz) <= 1
    # after the clip (2 s = 200 frames) only the clamp's floor is left: (max - 8 + 4) / 4
    assert np.allclose(features[:, 210:], features.max() - 2.0)


def test_the_clip_is_cut_at_thirty_seconds():
    long = sweep(37.0)
    np.testing.assert_array_equal(log_mel(long), log_mel(long[:30 * RATE]))
    assert not np.array_equal(log_mel(long), log_mel(long[:29 * RATE]))


@pytest.mark.parametrize("audio,match", [
    (np.zeros((2, 100)), r"shape \(n_samples,\).*received shape \(2, 100\)"),
    (np.zeros(0), r"at least one; received shape \(0,\)"),
    (np.array([0.0, np.nan]), "finite"),
])
def test_bad_audio_is_refused(audio, match):
    with pytest.raises(ValueError, match=match):
        log_mel(audio)


def test_front_end_from_a_folder(tmp_path):
    assert FrontEnd.from_folder(tmp_path) == FrontEnd()
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(
        {"feature_size": 128, "hop_length": 160, "n_fft": 400, "chunk_length": 30,
         "sampling_rate": 16000, "padding_side": "right"}))
    front = FrontEnd.from_folder(tmp_path)
    assert (front.feature_size, front.n_frames, front.n_samples) == (128, 3000, 480000)
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"hop_length": 500}))
    with pytest.raises(ValueError, match=r"preprocessor_config.json: hop_length must be an int "
                                         r">= 1 and <= 400; received 500"):
        FrontEnd.from_folder(tmp_path)
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"feature_size": "80"}))
    with pytest.raises(ValueError, match="feature_size must be an int; received str"):
        FrontEnd.from_folder(tmp_path)

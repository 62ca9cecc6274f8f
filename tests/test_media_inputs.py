"""Uploaded WAV and PNG files: headers checked before decoding, one-line refusals, and the
built-in examples synthesised in code (xattn.speech.wavfile, xattn.vision.pngfile, examples)."""

from __future__ import annotations

import io
import struct
import wave
import zlib

import numpy as np
import pytest

from xattn.speech.example import TONES, tone_clip
from xattn.speech.wavfile import MAX_SECONDS, read_wav, resample, wav_bytes, wav_header
from xattn.vision.example import rendered_word
from xattn.vision.glyphs import WordImage
from xattn.vision.pngfile import png_bytes, png_size, read_png


def _wav(samples: np.ndarray, rate: int, channels: int = 1, width: int = 2) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        scale = {1: 127, 2: 32767, 4: 2**31 - 1}[width]
        ints = np.round(samples * scale).astype({1: np.int16, 2: "<i2", 4: "<i4"}[width])
        if width == 1:
            ints = (ints + 128).astype(np.uint8)
        w.writeframes(ints.tobytes())
    return out.getvalue()


def test_a_wav_round_trips_through_the_play_control_s_bytes():
    x = (0.5 * np.sin(np.linspace(0, 40, 800))).astype(np.float32)
    back = read_wav(wav_bytes(x, 16000), 16000)
    assert back.shape == x.shape and np.abs(back - x).max() < 1e-4


@pytest.mark.parametrize("width", [1, 2, 4])
def test_pcm_widths_and_stereo_are_read_as_mono(width):
    left = np.linspace(-0.5, 0.5, 400)
    stereo = np.stack([left, -left], axis=1).ravel()
    h = wav_header(_wav(stereo, 8000, channels=2, width=width))
    assert (h.channels, h.rate, h.bits, h.frames) == (2, 8000, 8 * width, 400)
    mono = read_wav(_wav(stereo, 8000, channels=2, width=width), 8000)
    assert np.abs(mono).max() < 0.02                     # the two channels cancel


def test_resampling_keeps_the_duration_and_the_tone():
    rate = 8000
    x = np.sin(2 * np.pi * 440 * np.arange(rate) / rate)
    y = resample(x, rate, 16000)
    assert len(y) == 16000
    spectrum = np.abs(np.fft.rfft(y))
    assert abs(int(np.argmax(spectrum)) - 440) <= 1      # 1 Hz bins over one second


@pytest.mark.parametrize("data, says", [
    (b"ID3\x04" + b"\0" * 100, "not a WAV file"),
    (b"RIFF\0\0\0\0WAVEjunk\4\0\0\0abcd", "no 'fmt ' chunk"),
    (b"x" * 2_000_001, "at most 2,000,000"),
], ids=["mp3", "no-fmt", "too-large"])
def test_what_is_not_a_short_wav_is_refused_in_one_line(data, says):
    with pytest.raises(ValueError, match=says) as err:
        read_wav(data)
    assert "\n" not in str(err.value)


def test_the_header_refuses_a_long_clip_before_any_sample_is_read():
    # a header that claims 60 s of 16 kHz mono, with almost no samples behind it
    fmt = struct.pack("<HHIIHH", 1, 1, 16000, 32000, 2, 16)
    claimed = int(16000 * 2 * (MAX_SECONDS + 30))
    data = b"RIFF" + struct.pack("<I", 36 + claimed) + b"WAVE" + b"fmt " + \
        struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", claimed) + b"\0" * 64
    with pytest.raises(ValueError, match="cut short"):
        wav_header(data)
    with pytest.raises(ValueError, match="at most 30 s"):
        wav_header(data[:44] + b"\0" * claimed, max_bytes=10**8)


def test_compressed_and_odd_formats_are_named():
    fmt = struct.pack("<HHIIHH", 85, 1, 16000, 2000, 1, 0)           # MP3 in a WAV
    data = b"RIFF" + struct.pack("<I", 40) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + \
        b"data" + struct.pack("<I", 4) + b"\0" * 4
    with pytest.raises(ValueError, match="format 85"):
        read_wav(data)
    with pytest.raises(TypeError, match="received str"):
        read_wav("RIFF")


def test_a_png_round_trips_and_its_size_comes_from_the_header():
    image = np.zeros((20, 30, 3), np.uint8)
    image[5:10, 3:9] = (255, 0, 0)
    data = png_bytes(image)
    assert png_size(data) == (30, 20)
    assert np.array_equal(read_png(data), image)


def _bomb(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + \
        struct.pack(">I", zlib.crc32(chunk)) + b"\0" * 16


def test_a_png_declaring_too_many_pixels_is_refused_from_its_header():
    with pytest.raises(ValueError, match="100000 × 100000 pixels"):
        read_png(_bomb(100_000, 100_000))
    damaged = bytearray(_bomb(10, 10))
    damaged[20] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        png_size(bytes(damaged))
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(b"\xff\xd8\xff\xe0" + b"\0" * 40)          # a JPEG


def test_the_tone_example_puts_each_word_where_its_timing_says():
    clip = tone_clip(("low", "high"), word_seconds=0.3, gap_seconds=0.2, lead_seconds=0.1)
    assert [(w.word, w.start, w.end) for w in clip.words] == [("low", 0.1, 0.4),
                                                              ("high", 0.6, 0.9)]
    for w in clip.words:
        part = clip.samples[int(w.start * clip.rate):int(w.end * clip.rate)]
        spectrum = np.abs(np.fft.rfft(part))
        hz = np.fft.rfftfreq(len(part), 1 / clip.rate)
        assert abs(hz[np.argmax(spectrum)] - min(TONES[w.word])) < 10
    assert np.abs(clip.samples[:int(0.09 * clip.rate)]).max() == 0      # silence before
    with pytest.raises(ValueError, match="unknown tone word 'hum'"):
        tone_clip(("hum",))


def test_the_rendered_word_has_ink_inside_each_character_box():
    word = rendered_word("cat")
    dark = word.image.min(axis=2) < 128
    assert isinstance(word, WordImage) and word.text == "cat" and len(word.boxes) == 3
    for x0, y0, x1, y1 in word.boxes:
        assert dark[y0:y1, x0:x1].any()
    assert word.boxes[0][0] < word.boxes[1][0] < word.boxes[2][0]
    outside = dark.copy()
    for x0, y0, x1, y1 in word.boxes:
        outside[y0:y1, x0:x1] = False
    assert not outside.any()
    with pytest.raises(ValueError, match="printable ASCII"):
        rendered_word("")

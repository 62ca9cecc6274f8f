"""A short WAV clip from an upload: its header checked before a sample is decoded.

``read_wav(data)`` reads the RIFF header (format, channels, rate, bits and the data chunk's
length) and refuses, in one line, anything that is not a short PCM or float WAV
(``MAX_WAV_BYTES``, ``MAX_SECONDS``) before decoding; then the samples, averaged to mono and
resampled (linear interpolation) to the model's rate. ``wav_bytes`` writes samples back as a
16-bit WAV for the page's play control.
"""

from __future__ import annotations

import io
import struct
import wave
from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int

__all__ = ["MAX_WAV_BYTES", "MAX_SECONDS", "WavHeader", "wav_header", "read_wav", "resample",
           "wav_bytes"]

MAX_WAV_BYTES = 2_000_000       # 30 s of 16 kHz 16-bit mono is 960 kB
MAX_SECONDS = 30.0              # Whisper reads 30 s at most
_PCM, _FLOAT, _EXTENSIBLE = 1, 3, 0xFFFE


@dataclass(frozen=True)
class WavHeader:
    """What a WAV file's header says.

    Attributes
    ----------
    format : int
        1 (integer PCM) or 3 (IEEE float).
    channels, rate, bits : int
    offset, length : int
        Where the samples start in the file and how many bytes they take.
    """

    format: int
    channels: int
    rate: int
    bits: int
    offset: int
    length: int

    @property
    def frames(self) -> int:
        return self.length // (self.channels * self.bits // 8)

    @property
    def seconds(self) -> float:
        return self.frames / self.rate


def _chunks(data: bytes):
    """(id, offset of its body, length) of each RIFF chunk after ``WAVE``."""
    at = 12
    while at + 8 <= len(data):
        name, size = data[at:at + 4], struct.unpack_from("<I", data, at + 4)[0]
        yield name, at + 8, size
        at += 8 + size + (size & 1)


def wav_header(data: bytes, *, max_bytes: int = MAX_WAV_BYTES,
               max_seconds: float = MAX_SECONDS) -> WavHeader:
    """The header of a WAV file, checked: no sample is read.

    Raises
    ------
    TypeError
        ``data`` is not bytes.
    ValueError
        Too large, not a RIFF/WAVE file, not PCM (8, 16, 24, 32 bits) or float (32, 64 bits),
        no ``fmt `` or ``data`` chunk, a data chunk past the end, or longer than
        ``max_seconds`` (said in one line).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"a WAV file must be bytes; received {type(data).__name__}.")
    data = bytes(data)
    if len(data) > max_bytes:
        raise ValueError(f"the WAV file holds {len(data):,} bytes; at most {max_bytes:,} are "
                         f"read (about {max_seconds:.0f} s of 16 kHz 16-bit mono).")
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("this is not a WAV file: it must start with RIFF....WAVE (a .wav "
                         "saved as PCM or float; MP3, OGG and M4A are not read).")
    fmt = body = None
    for name, at, size in _chunks(data):
        if name == b"fmt " and size >= 16:
            fmt = struct.unpack_from("<HHIIHH", data, at)
            if fmt[0] == _EXTENSIBLE and size >= 40:
                fmt = (struct.unpack_from("<H", data, at + 24)[0], *fmt[1:])
        elif name == b"data":
            body = (at, size)
            break
    if fmt is None or body is None:
        raise ValueError("the WAV file has no 'fmt ' chunk followed by a 'data' chunk.")
    kind, channels, rate, _, _, bits = fmt
    allowed = {_PCM: (8, 16, 24, 32), _FLOAT: (32, 64)}
    if kind not in allowed or bits not in allowed[kind]:
        raise ValueError(f"the WAV file's samples are format {kind} with {bits} bits; only "
                         f"PCM (8, 16, 24 or 32 bits) and float (32 or 64 bits) are read.")
    if not 1 <= channels <= 8 or not 1000 <= rate <= 192_000:
        raise ValueError(f"the WAV file says {channels} channels at {rate} Hz; 1 to 8 "
                         f"channels at 1,000 to 192,000 Hz are read.")
    at, size = body
    if at + size > len(data):
        raise ValueError(f"the WAV file's data chunk says {size:,} bytes but the file ends "
                         f"after {len(data) - at:,}: it is cut short.")
    header = WavHeader(kind, channels, rate, bits, at, size)
    if header.frames == 0:
        raise ValueError("the WAV file holds no samples.")
    if header.seconds > max_seconds:
        raise ValueError(f"the clip lasts {header.seconds:.1f} s; at most {max_seconds:.0f} s "
                         f"are read. Cut it shorter first.")
    return header


def _samples(data: bytes, h: WavHeader) -> np.ndarray:
    """The samples as float32 in -1..1, (frames, channels)."""
    raw = data[h.offset:h.offset + h.frames * h.channels * h.bits // 8]
    if h.format == _FLOAT:
        x = np.frombuffer(raw, "<f4" if h.bits == 32 else "<f8").astype(np.float32)
    elif h.bits == 8:
        x = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128) / 128
    elif h.bits == 24:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        x = (np.where(v >= 1 << 23, v - (1 << 24), v) / float(1 << 23)).astype(np.float32)
    else:
        x = np.frombuffer(raw, f"<i{h.bits // 8}").astype(np.float32) / float(1 << (h.bits - 1))
    x = x.reshape(-1, h.channels)
    if not np.isfinite(x).all():
        raise ValueError("the WAV file holds samples that are NaN or infinite.")
    return x


def resample(samples, rate: int, target: int) -> np.ndarray:
    """Mono ``samples`` at ``rate`` Hz to ``target`` Hz by linear interpolation (float32)."""
    rate = check_int(rate, "rate", minimum=1)
    target = check_int(target, "target", minimum=1)
    x = np.asarray(samples, np.float32)
    if rate == target:
        return x
    n = max(1, int(round(len(x) * target / rate)))
    return np.interp(np.arange(n) * (rate / target), np.arange(len(x)), x).astype(np.float32)


def read_wav(data: bytes, rate: int = 16000, *, max_bytes: int = MAX_WAV_BYTES,
             max_seconds: float = MAX_SECONDS) -> np.ndarray:
    """A WAV file's samples, mono, at ``rate`` Hz, float32; the header checked first
    (``wav_header``, whose ValueError and TypeError it raises)."""
    h = wav_header(data, max_bytes=max_bytes, max_seconds=max_seconds)
    return resample(_samples(bytes(data), h).mean(axis=1), h.rate, rate)


def wav_bytes(samples, rate: int) -> bytes:
    """Mono float samples (about -1..1) as a 16-bit PCM WAV file."""
    x = np.clip(np.asarray(samples, np.float32), -1.0, 1.0)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(check_int(rate, "rate", minimum=1000, maximum=192_000))
        w.writeframes((x * 32767).astype("<i2").tobytes())
    return out.getvalue()

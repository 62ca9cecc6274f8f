"""xattn.speech.tones (clips with exact word spans) and xattn.speech.timing (heads scored
against them): against plain loops and hand-made attention."""

import numpy as np
import pytest

from xattn.speech.timing import (
    SECONDS_PER_POSITION,
    TimingCounts,
    dtw_counts,
    dtw_word_times,
    match_words,
    peak_counts,
    peak_times,
)
from xattn.speech.tones import (
    FADE_SECONDS,
    SAMPLING_RATE,
    SECONDS,
    TONES,
    WORDS,
    tone_clip,
    tone_clips,
    tone_word,
)

# --- tones -----------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_clips_and_another_seed_others():
    a, b, c = tone_clips(5, 3), tone_clips(5, 3), tone_clips(5, 4)
    assert all(np.array_equal(x.audio, y.audio) and x.spans == y.spans for x, y in zip(a, b,
                                                                                    strict=True))
    assert [x.text for x in a] != [x.text for x in c]


def test_spans_are_in_order_inside_the_clip_and_hold_the_sound():
    """Each word's span is where its energy is: the mean square inside spans is far above the
    silence between them (noise only), and every clip fits the 2-s window."""
    for clip in tone_clips(40, 0):
        assert 1 <= len(clip.words) <= 5 and set(clip.words) <= set(WORDS)
        assert len(clip.audio) <= SECONDS * SAMPLING_RATE and clip.audio.dtype == np.float32
        ends = [0.0] + [e for _, e in clip.spans]
        for (start, end), before in zip(clip.spans, ends, strict=False):
            assert before < start < end <= len(clip.audio) / SAMPLING_RATE
        inside = np.zeros(len(clip.audio), bool)
        for start, end in clip.spans:
            inside[round(start * SAMPLING_RATE):round(end * SAMPLING_RATE)] = True
        assert np.mean(clip.audio[inside] ** 2) > 50 * np.mean(clip.audio[~inside] ** 2)


def test_a_word_sounds_its_two_tones_in_order():
    clip = tone_clip(np.random.default_rng(11), max_words=1)
    (start, end), word = clip.spans[0], WORDS.index(clip.words[0])
    s, e = round(start * SAMPLING_RATE), round(end * SAMPLING_RATE)
    half = (s + e) // 2
    for part, hz in ((clip.audio[s:half], TONES[word][0]), (clip.audio[half:e], TONES[word][1])):
        spectrum = np.abs(np.fft.rfft(part, 8 * len(part)))
        peak = np.argmax(spectrum) * SAMPLING_RATE / (8 * len(part))
        assert abs(peak - hz) < 25, (peak, hz)


@pytest.mark.parametrize("chord", [False, True])
def test_a_tone_word_fades_in_and_out_and_sounds_its_tones(chord):
    """One after the other (the toy model's words) or together (the page's example): 10 ms
    fades, peak at most 1, both tones in the word's spectrum."""
    n, fade = 3200, int(FADE_SECONDS * SAMPLING_RATE)
    wave = tone_word((450.0, 1700.0), n, chord=chord)
    assert wave.shape == (n,) and np.abs(wave).max() <= 1
    ramp = np.abs(wave[:fade]) <= (np.arange(fade) + 1) / fade + 1e-12
    assert ramp.all() and (np.abs(wave[-fade:]) <= np.arange(fade, 0, -1) / fade + 1e-12).all()
    spectrum = np.abs(np.fft.rfft(wave))
    hz = np.fft.rfftfreq(n, 1 / SAMPLING_RATE)
    assert sorted(hz[np.argsort(spectrum)[-2:]].round()) == [450.0, 1700.0]
    first = np.abs(np.fft.rfft(wave[:n // 2]))           # the first half: only a chord has 1700
    near = np.abs(np.fft.rfftfreq(n // 2, 1 / SAMPLING_RATE) - 1700) <= 30
    high_share = first[near].sum() / first.sum()
    assert high_share > 0.2 if chord else high_share < 0.05, high_share


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        tone_clip(0)
    with pytest.raises(ValueError, match="max_words"):
        tone_clip(np.random.default_rng(0), max_words=6)
    with pytest.raises(TypeError, match="seed"):
        tone_clips(2, None)


# --- matching and peaks -----------------------------------------------------------------------


@pytest.mark.parametrize(("written", "said", "pairs"), [
    (["one", "two"], ["one", "two"], [(0, 0), (1, 1)]),
    (["one", "two", "two"], ["one", "two"], [(0, 0), (1, 1)]),
    (["two"], ["one", "two", "three"], [(0, 1)]),
    ([], ["one"], []),
    (["six", "one"], ["one", "six"], [(1, 0)]),
    (["a", "b", "c", "d"], ["b", "x", "d"], [(1, 0), (3, 2)]),
])
def test_words_are_matched_by_a_longest_common_subsequence(written, said, pairs):
    assert match_words(written, said) == pairs


def _one_hot(peaks, n_src=100):
    """(1, len(peaks), n_tgt, n_src): head h's row t all on position peaks[h][t]."""
    a = np.full((1, len(peaks), len(peaks[0]), n_src), 1e-3)
    for h, row in enumerate(peaks):
        for t, j in enumerate(row):
            a[0, h, t, j] = 1.0
    return a / a.sum(-1, keepdims=True)


def test_a_peak_is_on_time_within_the_tolerance_of_its_word_s_span():
    """Spans (0.20, 0.40) and (0.60, 0.80); positions of 20 ms: head 1 inside both, head 2 40 ms
    before the first and 80 ms after the second, head 3 200 ms away from both."""
    spans = [(0.20, 0.40), (0.60, 0.80)]
    a = _one_hot([[15, 35], [8, 44], [0, 50]])
    c = peak_counts(a, ["one", "two"], ["one", "two"], spans, (0.05, 0.1))
    np.testing.assert_array_equal(c.on_time[:, 0], [[2, 1, 0], [2, 2, 0]])
    np.testing.assert_allclose(c.f1()[1, 0], [1.0, 1.0, 0.0])
    np.testing.assert_allclose(peak_times(a)[0, 1], [8 * SECONDS_PER_POSITION, 44 * 0.02])


def test_words_written_that_were_not_said_lower_precision_only():
    spans = [(0.20, 0.40)]
    a = _one_hot([[15, 15]])
    c = peak_counts(a, ["one", "one"], ["one"], spans)
    assert (c.written, c.said, int(c.on_time[0, 0, 0])) == (2, 1, 1)
    assert c.f1()[0, 0, 0] == pytest.approx(2 * 1 / 3)
    total = c + peak_counts(a[:, :, :1], ["one"], ["one"], spans)
    assert (total.written, total.said, int(total.on_time[0, 0, 0])) == (3, 2, 2)
    assert "written=3" in repr(total)


def test_peak_counts_equal_a_plain_loop_on_random_attention():
    rng = np.random.default_rng(5)
    for _ in range(20):
        said = list(rng.choice(WORDS[:3], rng.integers(1, 5)))
        written = list(rng.choice(WORDS[:3], rng.integers(0, 5)))
        starts = np.sort(rng.uniform(0, 1.5, len(said)))
        spans = [(s, s + rng.uniform(0.05, 0.2)) for s in starts]
        a = rng.dirichlet(np.ones(100) * 0.3, (2, 3, max(len(written), 1)))
        c = peak_counts(a, written, said, spans, (0.05, 0.1))
        want = np.zeros((2, 2, 3), int)
        for i, j in match_words(written, said):
            for layer in range(2):
                for head in range(3):
                    t = np.argmax(a[layer, head, i]) * 0.02
                    off = max(0.0, spans[j][0] - t, t - spans[j][1])
                    want[:, layer, head] += [off <= 0.05 + 1e-9, off <= 0.1 + 1e-9]
        np.testing.assert_array_equal(c.on_time, want)


# --- word times by Whisper's DTW path (xattn.speech.alignment's) ---------------------------


def test_dtw_word_times_follow_blocks_of_attention():
    """Three rows (two words and the end of text) attending positions 0-29, 30-59 and 60-79
    of 80: the path moves to row 2 at position 30 (0.6 s) and to the last row at 60 (1.2 s);
    the first word starts at 0, as Whisper's path always does."""
    a = np.full((1, 1, 3, 100), 1e-4)
    for row, (s, e) in enumerate([(0, 30), (30, 60), (60, 80)]):
        a[0, 0, row, s:e] = 1.0
    a /= a.sum(-1, keepdims=True)
    starts, ends = dtw_word_times(a, [(0, 0)], 80)
    np.testing.assert_allclose(ends, [0.6, 1.2], atol=0.021)
    assert starts[0] == 0.0
    np.testing.assert_array_equal(starts[1:], ends[:-1])
    c = dtw_counts(a, ["one", "two"], ["one", "two"], [(0.0, 0.6), (0.6, 1.2)], 80)
    assert c.on_time.shape == (2, 1, 1) and int(c.on_time[1, 0, 0]) == 2
    together = dtw_counts(a, ["one", "two"], ["one", "two"], [(0.0, 0.6), (0.6, 1.2)], 80,
                          heads=[(0, 0)])
    np.testing.assert_array_equal(together.on_time, c.on_time)


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="n_layers, n_heads, n_tgt, n_src"):
        peak_counts(np.ones((2, 4, 100)), ["one"], ["one"], [(0, 1)])
    with pytest.raises(ValueError, match="each of the 2 words said"):
        peak_counts(np.ones((1, 1, 1, 9)), ["one"], ["one", "two"], [(0, 1)])
    with pytest.raises(ValueError, match="row for each of the 2"):
        dtw_counts(np.ones((1, 1, 1, 9)), ["one"], ["one"], [(0, 1)], 9)
    assert isinstance(TimingCounts(np.zeros((1, 1, 1)), 0, 0, (0.1,)).f1(), np.ndarray)

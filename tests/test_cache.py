"""The byte-bounded LRU cache shared by every session of a server."""

import threading
import time

import numpy as np
import pytest

from xattn.cache import ByteLRU, nbytes


def test_entries_are_dropped_by_bytes_least_recently_used_first():
    cache = ByteLRU(3 * nbytes(np.zeros(100)))
    for key in "abc":
        cache.put(key, np.zeros(100))
    assert cache.get("a") is not None          # "a" is now the most recently used
    cache.put("d", np.zeros(100))
    assert "b" not in cache and {"a", "c", "d"} <= {k for k in "abcd" if k in cache}
    assert cache.total_bytes <= cache.max_bytes


def test_a_value_larger_than_the_budget_is_not_stored_and_sizes_are_recounted():
    cache = ByteLRU(1000)
    cache.put("big", np.zeros(1000))
    assert "big" not in cache and cache.total_bytes == 0
    cache.put("x", np.zeros(10))
    cache.put("x", np.zeros(20))               # replacing counts the new size only
    assert cache.total_bytes == nbytes(np.zeros(20))


def test_nbytes_counts_arrays_inside_containers_and_dataclasses():
    from xattn.pipeline import Settings, run

    r = run(Settings())
    assert nbytes(r) > r.weights.nbytes + r.output.nbytes + r.encoder_output.nbytes
    assert nbytes({"a": [np.zeros(10), np.zeros(10)]}) > 160


def test_get_or_make_from_many_threads_keeps_the_total_within_budget():
    cache = ByteLRU(50 * nbytes(np.zeros(64)))

    def work(offset):
        for i in range(200):   # a hot set of 20 keys that fits, and a stream of 100 that does not
            key = (offset + i) % 20 if i % 2 else 20 + (offset + i) % 100
            value = cache.get_or_make(key, lambda: np.zeros(64))
            assert value.shape == (64,)

    threads = [threading.Thread(target=work, args=(k * 7,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.total_bytes <= cache.max_bytes and len(cache) <= 50
    assert cache.hits > 0 and cache.misses > 0


def test_budget_must_be_a_positive_int():
    with pytest.raises(TypeError, match="max_bytes must be an int; received bool"):
        ByteLRU(True)


def ask_at_once(cache, key, make, callers, release):
    """``callers`` threads asking ``cache`` for ``key`` at once; ``release`` is set once all of
    them are inside ``get_or_make`` (one making, the rest waiting). Their values and errors."""
    out, errors = [], []

    def ask():
        try:
            out.append(cache.get_or_make(key, make))
        except RuntimeError as error:
            errors.append(error)

    threads = [threading.Thread(target=ask) for _ in range(callers)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while cache.callers(key) < callers:
        assert time.monotonic() < deadline, f"only {cache.callers(key)} callers arrived"
        time.sleep(0.005)
    release.set()
    for t in threads:
        t.join()
    return out, errors


def test_callers_asking_for_one_missing_key_at_once_make_it_once_and_share_it():
    """A class asking for the same step within one poll: one computation, not one each."""
    cache, release, made = ByteLRU(1 << 20), threading.Event(), []

    def make():
        made.append(1)
        release.wait(30)
        return np.zeros(8)

    out, _ = ask_at_once(cache, "k", make, 8, release)
    assert len(made) == 1 and len(out) == 8 and all(v is out[0] for v in out)
    assert cache.callers("k") == 0 and "k" in cache


def test_a_value_too_large_to_store_is_still_shared_with_the_callers_that_waited():
    cache, release, made = ByteLRU(100), threading.Event(), []

    def make():
        made.append(1)
        release.wait(30)
        return np.zeros(1000)

    out, _ = ask_at_once(cache, "big", make, 4, release)
    assert len(made) == 1 and len(out) == 4 and "big" not in cache


def test_a_maker_that_raises_passes_the_turn_to_a_waiting_caller():
    cache, release, attempts = ByteLRU(1 << 20), threading.Event(), []

    def make():
        attempts.append(1)
        if len(attempts) == 1:
            release.wait(30)
            raise RuntimeError("the first maker fails")
        return "made"

    out, errors = ask_at_once(cache, "k", make, 3, release)
    assert len(errors) == 1 and out == ["made", "made"] and len(attempts) == 2
    assert cache.get("k") == "made" and cache.callers("k") == 0


def test_only_the_callers_that_wait_enter_wait():
    """The page's "waiting for that run" notice: shown by the students who wait for another's
    training, never by the one who trains."""
    cache, release, made, waited = ByteLRU(1 << 20), threading.Event(), [], []

    class Notice:
        def __enter__(self):
            waited.append(threading.current_thread().name)

        def __exit__(self, *exc):
            return False

    def make():
        made.append(threading.current_thread().name)
        release.wait(30)
        return "run"

    out = []
    threads = [threading.Thread(target=lambda: out.append(cache.get_or_make("k", make, Notice)),
                                name=f"student {i}") for i in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while cache.callers("k") < 3:
        assert time.monotonic() < deadline, f"only {cache.callers('k')} callers arrived"
        time.sleep(0.005)
    release.set()
    for t in threads:
        t.join()
    assert out == ["run"] * 3 and len(made) == 1
    assert sorted(waited) == sorted({t.name for t in threads} - set(made))
    assert cache.get_or_make("k", make, Notice) == "run" and len(waited) == 2   # stored: no wait


def test_a_newcomer_waits_for_the_waiter_that_retries_a_failed_make():
    """Student 1's training fails mid-way (interrupted), student 2 was waiting and retries;
    student 3 arrives meanwhile: it waits for student 2's run instead of making a second."""
    cache = ByteLRU(1 << 20)
    calls, first_started, second_started = [], threading.Event(), threading.Event()

    def fail():
        calls.append("fail")
        first_started.set()
        time.sleep(0.2)
        raise RuntimeError("interrupted")

    def slow():
        calls.append("make")
        second_started.set()
        time.sleep(0.3)
        return "run"

    results, errors = [], []

    def student(started, make):
        if started is not None:
            started.wait(30)
        try:
            results.append(cache.get_or_make("config", make))
        except RuntimeError as error:
            errors.append(error)

    threads = [threading.Thread(target=student, args=args)
               for args in ((None, fail), (first_started, slow), (second_started, slow))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["fail", "make"] and len(errors) == 1
    assert results == ["run", "run"] and cache.callers("config") == 0

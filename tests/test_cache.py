"""The byte-bounded LRU cache shared by every session of a server."""

import threading

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

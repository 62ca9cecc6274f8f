"""The class's shared store of training runs: one run per setting, even under concurrency."""

import threading
import time

import pytest

from xattn.train import TrainConfig
from xattn.ui._store import RunStore


def run_threads(targets) -> None:
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_store_trains_a_config_once_for_concurrent_callers_and_retries_after_a_failure():
    store, calls, config = RunStore(max_entries=2), [], TrainConfig(steps=1)

    def make():
        calls.append(1)
        time.sleep(0.2)
        return object()

    out = []
    run_threads([lambda: out.append(store.get_or_make(config, make))] * 4)
    assert len(calls) == 1 and len({id(run) for run, _ in out}) == 1
    assert sorted(made for _, made in out) == [False, False, False, True]
    with pytest.raises(RuntimeError):
        store.get_or_make(TrainConfig(seed=1), lambda: (_ for _ in ()).throw(RuntimeError()))
    assert store.get_or_make(TrainConfig(seed=1), object)[1]       # the lock was released
    store.get_or_make(TrainConfig(seed=2), object)
    assert store.get(config) is None                               # least recently used out


def test_a_newcomer_waits_for_the_waiter_that_retries_a_failed_run():
    """Session 1 fails mid-way (e.g. interrupted), session 2 was waiting and retries; session 3
    arrives meanwhile: it must wait for session 2's run, not train a second time."""
    store, config = RunStore(max_entries=4), TrainConfig(steps=1)
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

    results = []

    def session1():
        with pytest.raises(RuntimeError):
            store.get_or_make(config, fail)

    def session2():
        first_started.wait()
        results.append(store.get_or_make(config, slow))

    def session3():
        second_started.wait()
        results.append(store.get_or_make(config, slow))

    run_threads([session1, session2, session3])
    assert calls == ["fail", "make"]
    assert sorted(results) == [("run", False), ("run", True)]
    assert not store._training                                      # nothing left behind

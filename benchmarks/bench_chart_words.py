"""What the charts' words cost: a figure built in English and in another language, and a
revealed step's phone message built cold in each language a room uses (its charts are now
one figure per language).

    python -m benchmarks.bench_chart_words [--repeat 30]

Prints two tables (medians in ms). Targets: a translated figure within 10 % of English's
(the words are a dict lookup); a room in six languages keeps issue 43's Reveal p95 ≤ 0.3 s,
which ``benchmarks.bench_room --languages en fr de es zh ar`` measures end to end.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from xattn.classroom import Question, RoomView
from xattn.figures import classroom, heads
from xattn.lesson import shipped_lessons
from xattn.live.answers import class_step
from xattn.live.compute import clear_caches
from xattn.live.messages import room_message
from xattn.locales import LANGS


def _ms(make, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        make()
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def figures(repeat: int) -> None:
    rng = np.random.default_rng(0)
    w = rng.random((8, 12, 14))
    w /= w.sum(-1, keepdims=True)
    src, tgt = [f"s{j}" for j in range(14)], [f"t{i}" for i in range(12)]
    q = Question("choice", ("up", "down", "same"))
    builds = {"head_figure 12x14": lambda lang: heads.head_figure(w[0], src, tgt, head=0,
                                                                   lang=lang),
              "per_head_figure 8 heads": lambda lang: heads.per_head_figure(w, src, tgt,
                                                                            lang=lang),
              "answers_figure": lambda lang: classroom.answers_figure(
                  q, {"up": 30, "down": 9}, truth="up", lang=lang)}
    print("| figure | en ms | fr ms | ar ms | fr/en | target |")
    print("|---|---:|---:|---:|---:|---|")
    for name, build in builds.items():
        en, fr, ar = (_ms(lambda lang=lang, build=build: build(lang), repeat)
                      for lang in ("en", "fr", "ar"))
        print(f"| {name} | {en:.2f} | {fr:.2f} | {ar:.2f} | {fr / en:.2f} | ≤ 1.10 |")


def _cold(lesson, n: int, view, langs: tuple, runs: int) -> float:
    """Step ``n``'s revealed message built in each of ``langs`` from empty figure caches
    (its weights and words made first: not the subject), median ms."""
    times = []
    for _ in range(runs):
        clear_caches()
        for lang in langs:
            class_step(lesson, n, language=lang)
        t = time.perf_counter()
        for lang in langs:
            room_message(view, lesson, None, lang)
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def room(repeat: int) -> None:
    lesson = shipped_lessons()["short"]
    print("\n| revealed step (short lesson) | cold, en ms | cold, six languages ms | "
          "six / en |")
    print("|---|---:|---:|---:|")
    for n in range(1, len(lesson.steps) + 1):
        question = class_step(lesson, n)[1].question
        if question is None:
            continue
        view = RoomView("BENCH1", n, len(lesson.steps), "revealed", 1, question, {}, 0, 0)
        en, six = (_cold(lesson, n, view, langs, max(3, repeat // 10))
                   for langs in (("en",), LANGS))
        print(f"| step {n} | {en:.1f} | {six:.1f} | {six / en:.1f} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    figures(args.repeat)
    room(args.repeat)


if __name__ == "__main__":
    main()

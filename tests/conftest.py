"""Shared pytest hooks and the browser-test fixtures (one server and one Chromium per session).

The browser fixtures are skipped, with the reason printed, where Chromium or playwright is
missing; they fail instead when XATTN_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import tempfile

import pytest
from classroom_helpers import BACKENDS, Backend, RedisServer, redis_or_skip
from hypothesis import settings

from devtools.browser import (
    ARTIFACTS,
    Page,
    StreamlitServer,
    browser_missing,
    launch_chromium,
    unavailable,
)

# Examples per property: 25 in every run (a contributor's, CI's), 500 in the thorough profile
# (HYPOTHESIS_PROFILE=thorough: after changing a parser, a strategy or a property; before a
# release). No test sets its own count, so the profile decides for all. No per-example deadline
# (a loaded 2-core CI machine is slow, not wrong); in CI the examples are derandomized, so a run
# is reproducible and cannot fail on a draw nobody can replay.
EXAMPLES = {"dev": 25, "ci": 25, "thorough": 500}
settings.register_profile("dev", deadline=None, max_examples=EXAMPLES["dev"])
settings.register_profile("ci", deadline=None, derandomize=True, max_examples=EXAMPLES["ci"])
settings.register_profile("thorough", deadline=None, max_examples=EXAMPLES["thorough"])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI")
                                                               else "dev"))


def _scan_for_components_once() -> None:
    """Every new AppTest scans the metadata of every installed package for Streamlit components
    (components v2: ~150 packages here, most of an AppTest page run's time), though nothing is
    installed while the tests run: the first scan's answer serves every AppTest after it."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without components v2 does not scan
        return
    scan = functools.cache(manifest_scanner.scan_component_manifests)
    manifest_scanner.scan_component_manifests = lambda *args, **kwargs: list(scan(*args, **kwargs))


_scan_for_components_once()

# The weights' snapshots (xattn/encdec/snapshot.py) of this run's many temporary model folders
# go into one folder of the run's own, removed at its end, not the machine's shared one.
if not os.environ.get("XATTN_WEIGHTS_CACHE"):
    _SNAPSHOTS = tempfile.TemporaryDirectory(prefix="xattn-test-weights-")
    os.environ["XATTN_WEIGHTS_CACHE"] = _SNAPSHOTS.name


# --- markers: what a test needs, and what it costs (docs/testing.md) -------------------------
# Given here from the fixtures a test uses and the tables below, so no test file says it.

BROWSER_FIXTURES = {"chromium", "browser", "tabs", "window", "app"}
# A process of its own: a Streamlit server, a lecture hall (HAProxy + servers), redis-server.
SERVER_FIXTURES = {"server", "redis_server", "hall", "haproxy", "classroom", "model_server",
                   "media_server", "media_class",
                   "bad_page", "streamlit_run", "entrypoint"}
# ... or started in the test's body (node ids, matched from the start).
SERVER_TESTS = (
    "tests/test_deploy.py::test_two_sessions_on_two_processes",
    "tests/test_deploy.py::test_a_port_in_use",
    "tests/test_fresh_server.py::",
    "tests/test_hosting.py::",
    "tests/test_hall_bounds.py::test_haproxy_bounds_cookie_less_websockets",
    "tests/test_browser_languages.py::test_three_phones_in_three_languages_make_the_english_csv",
    "tests/test_browser_paris_madrid_cairo.py::",
)
# Neither, but more than ~2 s on a quiet 2-core machine: a fresh Python process, a training
# run, every view or lesson step on every source, the link fuzzed through the page.
SLOW_TESTS = (
    # the lesson re-derived: held-out AERs and jobs by loops, every follow-up case
    "tests/test_lesson_rederived.py::test_every_follow_up_case_is_what_its_weights_give",
    "tests/test_lesson_rederived.py::test_every_step_on_three_settings_is_what_the_weights_give"
    "[cross-attention-10-",
    "tests/test_lesson_rederived.py::test_every_step_on_three_settings_is_what_the_weights_give"
    "[cross-attention-12-",
    "tests/test_lesson_rederived.py::test_every_step_on_three_settings_is_what_the_weights_give"
    "[en-de-",
    # the model's distractors on 100 sentences: a masked pass per source word, held-out AERs
    "tests/test_misconceptions.py::test_the_models_questions_distractors_on_100_sentences",
    "tests/test_js.py::test_eslint_finds_nothing_in_the_phone_pages_scripts",
    "tests/test_attention.py::test_large_inputs_take_the_threaded_blocked_path",
    "tests/test_attention.py::test_same_numbers_in_processes_with_different_hash_seeds",
    "tests/test_app_models.py::test_the_shipped_model_is_the_default_and_needs_no_torch",
    "tests/test_classroom_store.py::test_two_processes_cast_500_answers",
    "tests/test_marian_shipped.py::test_the_card_s_numbers_are_recomputed_without_torch",
    "tests/test_marian_shipped.py::test_a_fresh_process_needs_no_torch",
    "tests/test_toy_speech.py::test_the_card_s_numbers_are_recomputed_without_torch",
    "tests/test_toy_reader.py::test_the_card_s_numbers_are_recomputed_without_torch",
    # a toy training script's command line: it imports torch and transformers (~2 s)
    "tests/test_toy_training.py::test_a_run_writes_the_folder",
    "tests/test_toy_training.py::test_check_retrains_elsewhere",
    "tests/test_matrix.py::",
    "tests/test_speech_timing.py::test_median_filter_and_dtw_equal_transformers",
    "tests/test_app_media.py::test_a_whisper_folder_hears_the_built_in_clip",
    "tests/test_media.py::test_folders_are_recognised_by_their_config",
    "tests/test_models.py::test_importing_never_imports_torch",
    "tests/test_models.py::test_module_runs_as_a_script",
    "tests/test_ready.py::test_the_command_runs_as_a_module",
    "tests/test_models.py::test_cli_process_prints_one_line_when_loading_fails",
    "tests/test_package.py::test_the_library_imports_without_streamlit",
    "tests/test_package.py::test_the_ui_is_what_brings_in_streamlit",
    "tests/test_train.py::test_timelapse_is_identical_in_another_process",
    "tests/test_ui_state.py::test_every_control_is_a_url_parameter",
    "tests/test_ui_state.py::test_a_fresh_server_process_knows_every_parameter",
    # three classes revealed on an English, a French and an Arabic lecturer's page (~7 s)
    "tests/test_app_lesson_languages.py::test_a_class_revealed_on_a_french_or_arabic_page",
    # every step of the default lesson built in en, fr and ar, asking and revealed (~6 s)
    "tests/test_verdict_languages.py::test_no_frame_of_a_shipped_lesson_reads_english_in_french"
    "_or_arabic[cross-attention]",
    # the default lesson's questions and its steps made in two languages, then a class
    "tests/test_bench_moves.py::",
)


def _marks(item) -> set[str]:
    names = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    marks = set()
    if names & BROWSER_FIXTURES:
        marks.add("browser")
    if (names & SERVER_FIXTURES or params.get("backend") == "redis"
            or item.nodeid.startswith(SERVER_TESTS)):
        marks.add("server")
    if item.nodeid.startswith(SLOW_TESTS):
        marks.add("slow")
    return marks


# Rough seconds a test costs, by its marks: what orders the files for two workers.
COST = {"browser": 4.0, "server": 3.0, "slow": 2.0}


def pytest_collection_modifyitems(config, items):
    for item in items:
        for mark in _marks(item) - {m.name for m in item.iter_markers()}:
            item.add_marker(mark)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Workers take whole files from a queue: the costliest first, so that no long file
        # starts last while the other worker has nothing left (same order in every worker).
        cost: dict[str, float] = {}
        for item in items:
            path = item.nodeid.split("::")[0]
            cost[path] = cost.get(path, 0.0) + max(
                [COST.get(m.name, 0.0) for m in item.iter_markers()] + [0.05])
        items.sort(key=lambda item: -cost[item.nodeid.split("::")[0]])   # stable in a file


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (pyproject's addopts): two workers for a run of the whole suite or of
    folders, none (one process) for named files or tests, where starting workers costs more
    than it saves. PYTEST_XDIST_AUTO_NUM_WORKERS=N, or ``-n N`` on the command line, decides
    instead (``-n 0``: one process)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    named = [a for a in config.args if "::" in a or a.endswith(".py")]
    if named or len(os.sched_getaffinity(0)) < 2:
        return 0
    return 2


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item (``item.rep_call``), so a fixture's teardown can
    tell that its test failed (the browser tests save a screenshot then)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


# --- fixtures --------------------------------------------------------------------------------

# The class store on each backend (tests/test_classroom_*.py): one redis-server per session,
# a fresh SQLite file or Redis database per test (``classroom_helpers.Backend``).
@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    redis_or_skip()
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path) -> Backend:
    url = request.getfixturevalue("redis_server").url if request.param == "redis" else None
    return Backend.fresh(request.param, tmp_path, url)


@pytest.fixture
def store(backend):
    s = backend.open()
    yield s
    s.close()


@pytest.fixture
def fresh_cache():
    """The server's computation caches empty (a cold start), before and after the test: the
    caches are shared by every AppTest run of the process."""
    from xattn.live.compute import clear_caches

    clear_caches()
    yield
    clear_caches()


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> str:
    """A tiny random Marian translation model saved in a folder (no download)."""
    from model_helpers import models_or_skip

    models_or_skip()
    import torch

    from devtools.tiny_marian import save_tiny
    # A 16-wide model gains nothing from threads, and on a busy 2-core machine torch's thread
    # pool waiting for a core made single passes take seconds.
    torch.set_num_threads(1)
    return str(save_tiny(tmp_path_factory.mktemp("tiny-marian")))


@pytest.fixture(scope="session")
def family_dirs(tmp_path_factory):
    """``folder(family)``: a tiny random model of a family the NumPy models run (BART, mBART,
    M2M100, NLLB, T5), saved by transformers as a Hub folder is laid out; made on first use."""
    from model_helpers import models_or_skip

    models_or_skip()
    import torch

    from devtools.tiny_models import make_tokenizer, tiny_model
    torch.set_num_threads(1)
    made = {}

    def folder(family: str):
        if family not in made:
            root = tmp_path_factory.mktemp(family)
            tokenizer = make_tokenizer(family, root / "tokenizer")
            tiny_model(family, tokenizer, seed=4, spread=0.35 if family == "t5" else 0.6
                       ).save_pretrained(root / "model")
            tokenizer.save_pretrained(root / "model")
            made[family] = root / "model"
        return made[family]
    return folder


@pytest.fixture(scope="session")
def whisper_dir(tmp_path_factory) -> str:
    """A tiny random Whisper folder (2 s clips, 2 + 2 layers of 4 heads), no download."""
    from model_helpers import models_or_skip

    models_or_skip()
    from devtools.tiny_whisper import TINY, save_whisper
    return str(save_whisper(tmp_path_factory.mktemp("tiny-whisper"), spread=0.5, **TINY))


@pytest.fixture(scope="session")
def vision_dir(tmp_path_factory) -> str:
    """A tiny random VisionEncoderDecoder folder (ViT 32 px of 8 px patches + TrOCR)."""
    from model_helpers import models_or_skip

    models_or_skip()
    from devtools.tiny_vision import save_tiny_vision, tiny_vision
    return str(save_tiny_vision(tiny_vision(), tmp_path_factory.mktemp("tiny-vision")))


@pytest.fixture
def tiny_model(tiny_dir, monkeypatch) -> str:
    """The tiny model as the server's only allowed model (what ``weights=model`` offers)."""
    from xattn.torch_models import MODELS_ENV

    monkeypatch.setenv(MODELS_ENV, tiny_dir)
    return tiny_dir


@pytest.fixture(scope="session")
def trained():
    """The default training run (d_model 32, 4 heads, 100 steps of 32 sentences), shared."""
    from xattn.train import TrainConfig, train

    return train(TrainConfig())


@pytest.fixture(scope="session")
def server():
    reason = browser_missing()
    if reason:
        unavailable(reason)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")           # gw0, gw1: a log each
    with StreamlitServer(log=ARTIFACTS / f"browser-tests-server{worker}.log") as srv:
        yield srv


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the whole run: playwright's sync API allows one per thread."""
    reason = browser_missing()
    if reason:
        unavailable(reason)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        try:
            browser = launch_chromium(p)
        except Exception as err:  # a broken install: same rule as a missing one
            unavailable(f"Chromium did not start: {str(err).splitlines()[0]}")
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def browser(server, chromium):
    """Chromium, with the app's server running."""
    return chromium


class Tabs:
    """Tabs of the app kept open for the whole run, handed out by window size.

    A new tab costs more than most tests that use it: its renderer parses Streamlit's and
    Plotly's JavaScript again (a lesson step took 3-5x as long in a new context as a reload in a
    tab that had shown the page before). So a test takes a tab of its size and gives it back
    clean: the other pages it opened closed, storage and cookies cleared, parked on the server's
    health page (the app's session ends before the next test starts), its lists of console
    errors and dialogs emptied. A tab whose test failed is closed instead (after its
    screenshots), never reused. Each tab has a browser context of its own.
    """

    def __init__(self, browser, server):
        self.browser, self.server = browser, server
        self.free: dict[tuple[int, int, bool], list[Page]] = {}

    def take(self, width: int, height: int, phone: bool = False) -> Page:
        free = self.free.setdefault((width, height, phone), [])
        if free:
            return free.pop()
        context = self.browser.new_context(viewport={"width": width, "height": height},
                                           is_mobile=phone, has_touch=phone)
        return Page(context, self.server)

    def give_back(self, tab: Page, key: tuple[int, int, bool], reuse: bool) -> None:
        page = tab.page
        if reuse:
            try:
                for other in page.context.pages:
                    if other is not page:
                        other.close()
                if page.url.startswith(self.server.url):
                    page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
                page.goto(f"{self.server.url}_stcore/health")
                page.context.clear_cookies()
            except Exception as err:  # a tab in a state nobody planned for: not reused
                print(f"a tab could not be cleaned for reuse: {err}")
                reuse = False
        if not reuse:
            page.context.close()
            return
        tab.errors.clear()
        tab.dialogs.clear()
        tab.timings.clear()
        self.free[key].append(tab)

    def close(self) -> None:
        for tabs in self.free.values():
            for tab in tabs:
                tab.page.context.close()
        self.free.clear()


@pytest.fixture(scope="session")
def tabs(browser, server):
    pool = Tabs(browser, server)
    yield pool
    pool.close()


def _screenshots(request, tabs: list[Page]) -> bool:
    """Save every page of the tabs of a failed test in ARTIFACTS; True if the test failed."""
    report = getattr(request.node, "rep_call", None)
    if report is None or not report.failed:
        return False
    ARTIFACTS.mkdir(exist_ok=True)
    stem = re.sub(r"[^\w.-]+", "_", request.node.name)
    pages = [p for tab in tabs for p in tab.page.context.pages]
    for n, p in enumerate(pages):
        try:
            p.screenshot(path=str(ARTIFACTS / f"{stem}-{n}.png"), full_page=True)
            (ARTIFACTS / f"{stem}-{n}.html").write_text(p.content())
        except Exception as err:  # the screenshot must not hide the test's own failure
            print(f"could not save a screenshot of page {n}: {err}")
    print(f"screenshots of the failed test in {ARTIFACTS}")
    return True


@pytest.fixture
def window(tabs, request):
    """``window(width, height, phone=False)``: a tab of the app in a window of that size (a
    phone: touch, mobile), fresh for this test in cookies, storage and page state."""
    taken: list[tuple[Page, tuple[int, int, bool]]] = []

    def open_at(width: int, height: int, phone: bool = False) -> Page:
        taken.append((tabs.take(width, height, phone), (width, height, phone)))
        return taken[-1][0]
    yield open_at
    failed = _screenshots(request, [tab for tab, _ in taken])
    for tab, key in taken:
        tabs.give_back(tab, key, reuse=not failed)


@pytest.fixture
def app(window):
    """A tab of the app in a 1400x1100 window."""
    tab = window(1400, 1100)
    yield tab
    print(" ".join(f"{label} {took:.1f}s" for label, took in tab.timings))


@pytest.fixture(autouse=True)
def keep_main_module():
    """Streamlit's AppTest runs the page as ``__main__`` and leaves it there: a process pool
    started later in the same worker (the readiness check's, with "spawn") would run the
    page's script in every child, which dies of it. Each test gets the worker's own back."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main

"""Shared pytest hooks and the browser-test fixtures (one server and one Chromium per session).

The browser fixtures are skipped, with the reason printed, where Chromium or playwright is
missing; they fail instead when XATTN_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import settings

from devtools.browser import (
    ARTIFACTS,
    Page,
    StreamlitServer,
    browser_missing,
    launch_chromium,
    unavailable,
)

# No per-example deadline (a loaded 2-core CI machine is slow, not wrong); in CI the examples
# are derandomized, so a run is reproducible and cannot fail on a draw nobody can replay.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item (``item.rep_call``), so a fixture's teardown can
    tell that its test failed (the browser tests save a screenshot then)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


# --- fixtures --------------------------------------------------------------------------------

@pytest.fixture
def fresh_cache():
    """The server's computation caches empty (a cold start), before and after the test: the
    caches are shared by every AppTest run of the process."""
    from xattn.ui.compute import clear_caches

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


@pytest.fixture
def tiny_model(tiny_dir, monkeypatch) -> str:
    """The tiny model as the server's only allowed model (what ``weights=model`` offers)."""
    from xattn.models import MODELS_ENV

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
    with StreamlitServer(log=ARTIFACTS / "browser-tests-server.log") as srv:
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


@pytest.fixture
def app(browser, server, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    tab = Page(context, server)
    yield tab
    print(" ".join(f"{label} {took:.1f}s" for label, took in tab.timings))
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        stem = re.sub(r"[^\w.-]+", "_", request.node.name)
        for p in context.pages:
            n = context.pages.index(p)
            try:
                p.screenshot(path=str(ARTIFACTS / f"{stem}-{n}.png"), full_page=True)
                (ARTIFACTS / f"{stem}-{n}.html").write_text(p.content())
            except Exception as err:  # the screenshot must not hide the test's own failure
                print(f"could not save a screenshot of page {n}: {err}")
        print(f"screenshots of the failed test in {ARTIFACTS}")
    context.close()



"""The real-model tests' rule: skip with the reason where torch, transformers or sentencepiece
is missing; fail instead where XATTN_REQUIRE_MODELS=1 (CI), so they cannot silently skip."""

import os

import pytest

from xattn.torch_models import missing_packages

REQUIRE_ENV = "XATTN_REQUIRE_MODELS"


def models_or_skip() -> None:
    """Skip with the reason where the packages are missing; fail where they are required."""
    reason = missing_packages()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0", "false", "no"):
        pytest.fail(f"{REQUIRE_ENV} is set but the model tests cannot run: {reason}",
                    pytrace=False)
    pytest.skip(f"model tests skipped: {reason}")

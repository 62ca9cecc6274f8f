"""Shared pytest hooks."""

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item (``item.rep_call``), so a fixture's teardown can
    tell that its test failed (the browser tests save a screenshot then)."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report

"""Test layers: every test is `fast` unless its module or function is marked `build` or `browser`.

    pytest -m fast        # the package, quiz format, build helpers: about a minute
    pytest -m build       # site build, lab build, notebooks executed in CPython
    pytest -m browser     # headless Chromium, Firefox ESR and WebKitGTK against the served site

Test files are shared out to one worker a core (pytest-xdist, pyproject's addopts); `pytest -n 0`
runs them in one process (with -s, to see what a test prints).
"""
import pytest

# the checks written once for every engine assert in tests/support: show their values on failure
pytest.register_assert_rewrite("support.every_engine", "support.lab_checks", "support.lesson")

LAYERS = ("build", "browser")


def pytest_collection_modifyitems(items):
    for item in items:
        if not any(item.get_closest_marker(layer) for layer in LAYERS):
            item.add_marker(pytest.mark.fast)


# Hypothesis fails an example that takes over 200 ms by default: a timing assertion, which a busy
# machine trips (seen once: a closed-form property failed in the fast layer under load ≈ 9, and
# passed alone). Tests never assert a time (benchmarks/ measure speed), so no deadline.
from hypothesis import settings  # noqa: E402

settings.register_profile("specdec-lab", deadline=None)
settings.load_profile("specdec-lab")


# A browser module whose fixture `served` yields (browser, base_url) (tests/support/engines.py's
# started: its engine and the site built for its server) gets them by these names too; a module
# that starts its browser otherwise defines its own `browser` and `base_url`.
@pytest.fixture(scope="module")
def browser(served):
    return served[0]


@pytest.fixture(scope="module")
def base_url(served):
    return served[1]

"""Shared test set-up: offscreen Qt, the gpu marker, a registry that forgets test workloads."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


def gpu_unusable_reason() -> str:
    """'' when CuPy can compute on a GPU here, else why not."""
    from workbench.catalog.backends import probe
    a = probe("cupy")
    return "" if a.usable else f"no usable GPU: {a.reason}"


def pytest_collection_modifyitems(config, items):
    gpu_items = [i for i in items if "gpu" in i.keywords]
    if not gpu_items:
        return
    reason = gpu_unusable_reason()
    if reason:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def registry():
    """The global registry; workloads a test adds are removed afterwards."""
    from workbench.catalog.workloads import REGISTRY
    REGISTRY.names()
    before = dict(REGISTRY._workloads)
    yield REGISTRY
    REGISTRY._workloads.clear()
    REGISTRY._workloads.update(before)


@pytest.fixture
def declared(registry):
    """The registry and the backends' table as they were: what a test declares (workloads,
    backends) leaves with it, as later tests count them."""
    from workbench.catalog import backends
    before = dict(backends.BACKENDS)
    yield registry
    backends.BACKENDS.clear()
    backends.BACKENDS.update(before)


@pytest.fixture(autouse=True)
def _close_answers_yes(request, monkeypatch):
    """A window closed during a sweep asks whether to stop it (a modal question): in tests that
    drive windows the answer is yes, unless a test puts its own in ``window.confirm_close``."""
    if "qtbot" in request.fixturenames:
        from panels import window
        monkeypatch.setattr(window.MainWindow, "_ask_to_stop", lambda self: True)
    yield

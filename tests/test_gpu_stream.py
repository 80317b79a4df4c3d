"""The GPU's STREAM rungs: timed in bursts as points are, and the same whichever library measures."""
from __future__ import annotations

import pytest

from workbench.measure.gpu import stream
from workbench.measure.sampling import BURST_S, MAX_BURST

CALL_S = 4e-6       # a cache-resident rung's call
GAP_S = 6e-6        # the launch gap an event pair around a single call also times


class FakeStream:
    """A device whose every call takes CALL_S, and whose events also time one launch gap."""

    def __init__(self, blocks: bool) -> None:
        self.calls = 0
        self.blocks = blocks

    def work(self) -> None:
        self.calls += 1

    def _run(self, fn) -> int:
        before = self.calls
        fn()
        return self.calls - before

    def timed(self, fn):
        return self._run(fn) * CALL_S + GAP_S, None

    def timed_blocked(self, fn):
        n = self._run(fn)
        return n * CALL_S if self.blocks else None


def test_a_rung_behind_the_blocking_kernel_times_the_call_without_its_launch_gap():
    session = FakeStream(blocks=True)
    assert stream.best_seconds(session, session.work) == pytest.approx(CALL_S)


def test_without_a_blocking_kernel_a_burst_spreads_the_gap_over_its_calls():
    session = FakeStream(blocks=False)
    seconds = stream.best_seconds(session, session.work)
    n = min(MAX_BURST, -(-BURST_S // (CALL_S + GAP_S)))
    assert seconds == pytest.approx(CALL_S + GAP_S / n)
    assert seconds < (CALL_S + GAP_S) / 2     # a single call between events read at least 2.5x slower


@pytest.mark.gpu
def test_a_numba_session_measures_the_ladder_as_a_cupy_session_does():
    """The limits are measured once per process by whichever session asks first: a Numba session
    measured copies only, so a CuPy raw kernel's read-heavy point at 12 MiB was called beyond the
    H100's L2 after a Numba CUDA backend had run first."""
    from workbench.catalog.backends import probe
    for backend in ("cupy", "numba-cuda"):
        if not probe(backend).usable:
            pytest.skip(f"{backend}: {probe(backend).reason}")
    from workbench.measure.gpu.cupy_session import CupySession
    from workbench.measure.gpu.numba_session import NumbaCudaSession
    numba, cupy = NumbaCudaSession(), CupySession()
    for nbytes in (2 ** 20, 2 ** 24, 2 ** 28):
        for pattern in ("copy", "read", "triad"):
            a, b = numba.stream_seconds(nbytes, pattern), cupy.stream_seconds(nbytes, pattern)
            assert a is not None and b is not None, (nbytes, pattern)
            assert 0.5 < a / b < 2.0, (nbytes, pattern, a, b)

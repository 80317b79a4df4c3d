"""Issue 37 on a real GPU: copies overlapped with compute reach near their limit from pinned memory
and gain nothing from pageable memory; a point's timeline holds the copies the row times.

Marked ``gpu``: skipped, with the reason, where no GPU is usable (CI)."""
from __future__ import annotations

import pytest

from workbench.catalog.backends import probe
from workbench.measure import protocol
from workbench.measure.engine import SweepSpec, run_sweep
from workbench.measure.gpu import kernels
from workbench.core import verdicts
from workbench.views import overlap, timeline

pytestmark = pytest.mark.gpu

BIG = 2 ** 26


def need(backend: str) -> None:
    a = probe(backend)
    if not a.usable:
        pytest.skip(f"{backend} not usable here: {a.reason}")


def rows_of(backend: str, variants, sizes=(BIG,), **kw):
    spec = SweepSpec("overlap", (backend,), sizes, "float32", variants=tuple(variants), min_repeats=5,
                     budget_s=kw.pop("budget_s", 0.3), **kw)
    out = protocol.rows(run_sweep(spec))
    for r in out:
        assert r["status"] == "ok", f"{r['variant']}: {r['message']}"
    return {r["variant"]: r for r in out}


@pytest.mark.parametrize("backend", ["cupy", "numba-cuda"])
def test_four_streams_from_pinned_memory_come_within_1_3x_of_the_longest_phase(backend):
    need(backend)
    got = rows_of(backend, ("pinned sequential", "pinned 4 streams"))
    over, seq = got["pinned 4 streams"], got["pinned sequential"]
    limit = overlap.limit_s(over)
    assert over["total_median_s"] <= 1.3 * limit, overlap.limit_text(over)
    assert seq["total_median_s"] > limit * 1.5         # in turn, the phases add up: something to win


@pytest.mark.parametrize("backend", ["cupy", "numba-cuda"])
def test_four_streams_from_pageable_memory_are_no_faster_than_sequential(backend):
    need(backend)
    got = rows_of(backend, ("pageable sequential", "pageable 4 streams"))
    v = verdicts.compare_rows(got["pageable 4 streams"], got["pageable sequential"])
    # no faster within the noise: at most the minimum effect the verdicts call "the same"
    assert v.verdict != "faster" or v.speedup < 1.1, v


@pytest.mark.parametrize("backend", ["cupy", "numba-cuda"])
@pytest.mark.parametrize("memory", ["pinned", "pageable"])
def test_the_timeline_copies_add_up_to_the_rows_copy_times(backend, memory):
    """Sequential variant: the recorded call's copies, each direction summed, are the row's h2d_s and
    d2h_s within 5 % from pinned memory, and most of it, never more, from pageable memory (the
    driver's staging on the host is in no GPU record); the bars are the kernel records the row counts."""
    need(backend)
    if kernels.unavailable():
        pytest.skip(kernels.unavailable())
    # At 2^26: a phase timed with events holds the host's issue of its copy too (Numba's Python
    # dispatch of copy_to_device, about 80 µs, 7 % of a 64 MiB pinned copy on the H200).
    row = rows_of(backend, (f"{memory} sequential",), sizes=(BIG,))[f"{memory} sequential"]
    tl = timeline.of_row(row)
    assert tl.source.startswith("one call recorded by CUPTI")
    for way, column in (("h2d", "h2d_s"), ("d2h", "d2h_s")):
        gpu = timeline.copy_seconds(tl, way)
        if memory == "pinned":
            assert gpu == pytest.approx(row[column], rel=0.05), (way, tl.note)
        else:
            # From pageable memory the driver stages the copy through a pinned buffer of its own:
            # the host's memcpy between the user's pages and that buffer is in the row's time and
            # in no GPU record, so the records hold less, never more. On the H100 (2026-12-07)
            # Numba's 256 MiB device-to-host copy was 14.9 ms of DMA in a 16.1 ms phase (7 %).
            assert 0.8 * row[column] <= gpu <= 1.05 * row[column], (way, gpu, row[column], tl.note)
    copies = [s for s in tl.spans if s.kind == "copy"]
    assert copies and all(memory in s.hover for s in copies if s.group in ("h2d", "d2h"))
    assert sum(s.kind == "kernel" for s in tl.spans) == row["kernel_count"] >= 1


@pytest.mark.parametrize("backend", ["cupy", "numba-cuda"])
def test_an_overlapped_call_runs_copies_and_kernels_of_different_streams_at_once(backend):
    need(backend)
    if kernels.unavailable():
        pytest.skip(kernels.unavailable())
    row = rows_of(backend, ("pinned 4 streams",), sizes=(2 ** 24,))["pinned 4 streams"]
    tl = timeline.of_row(row)
    gpu = sorted((s for s in tl.spans if s.kind in kernels.GPU_KINDS), key=lambda s: s.start)
    assert len({s.stream for s in gpu}) == 4
    assert any(b.start < a.end and b.stream != a.stream for a, b in zip(gpu, gpu[1:])), tl.note

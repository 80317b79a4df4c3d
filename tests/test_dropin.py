"""Your own function, unchanged, on the drop-ins (issue 36): what runs here, what is refused and why.

The Numba drop-ins run on this machine; the CuPy drop-in's handling of a function that leaves the
device is held to a stand-in for CuPy whose arrays refuse NumPy's conversion, as CuPy's do."""
from __future__ import annotations

import logging
from types import SimpleNamespace

import numpy as np
import pytest

import workbench.api as wb
from workbench.catalog import dropin
from workbench.catalog.workloads import Context


def setup(n):
    return np.random.default_rng(0).random(n)


def axpy64(x):
    """Compiles under Numba; float64 in, float64 out, as NumPy gives."""
    return 2.0 * x + 1.0


def spectrum(x):
    """NumPy's FFT: Numba has none."""
    return np.abs(np.fft.rfft(x))


def test_a_function_that_compiles_runs_on_both_numba_drop_ins_verified_its_compilation_in_the_first_call(caplog, declared):
    with caplog.at_level(logging.WARNING):
        df = wb.try_on_gpu(axpy64, setup=setup, sizes=[2 ** 12], dtype="float64", progress=False, budget=0.05)
    rows = df.set_index("backend")
    assert set(rows.index) == {"numpy", "numba.njit (drop-in)", "numba.njit parallel (drop-in)"}
    for name in ("numba.njit (drop-in)", "numba.njit parallel (drop-in)"):
        r = rows.loc[name]
        assert r["status"] == "ok" and r["verified"], r["message"]
        assert r["first_call_s"] > 10 * r["compute_median_s"]          # Numba compiles at the first call
        assert r["answer"].startswith(f"axpy64 runs unchanged as {name}: ") and r["answer"].endswith(".")
    # Whose threads each ran on: a plain njit one, parallel=True Numba's pool (the compute ceiling's count).
    import numba
    assert rows.loc["numba.njit (drop-in)", "threads"] == 1
    assert rows.loc["numba.njit parallel (drop-in)", "threads"] == numba.config.NUMBA_NUM_THREADS
    # The GPU drop-in that cannot run here is said, in one line, with why.
    said = [rec.getMessage() for rec in caplog.records if "cupy (drop-in)" in rec.getMessage()]
    assert len(said) == 1 and "not usable here" in said[0] and "\n" not in said[0]


def test_a_function_numba_cannot_compile_is_an_error_row_giving_the_compilers_reason_in_one_line(declared):
    df = wb.sweep("spectrum", setup=setup, kernels={"numpy": spectrum}, drop_in=True, sizes=[256],
                  dtype="float64", progress=False, budget=0.02)
    rows = df.set_index("backend")
    assert rows.loc["numpy", "status"] == "ok"
    for name in ("numba.njit (drop-in)", "numba.njit parallel (drop-in)"):
        message = rows.loc[name, "message"]
        assert rows.loc[name, "status"] == "error"
        assert "does not compile under Numba: Unknown attribute 'rfft' of type Module(numpy.fft)" in message, message
        assert "\n" not in message and "\x1b" not in message


def test_a_float32_point_of_a_function_numba_computes_in_float64_is_wrong_never_fast(declared):
    df = wb.sweep("axpy", setup=setup, kernels={"numpy": axpy64}, drop_in=True, sizes=[256], dtype="float32",
                  progress=False, budget=0.02)
    rows = df.set_index("backend")
    assert rows.loc["numpy", "status"] == "ok"          # NumPy keeps float32 (NEP 50); Numba's literal is float64
    assert rows.loc["numba.njit (drop-in)", "status"] == "wrong"
    assert "float64" in rows.loc["numba.njit (drop-in)", "message"]


def test_drop_in_with_backends_named_adds_the_drop_ins_unless_one_is_named(declared):
    df = wb.sweep("axpy", setup=setup, kernels={"numpy": axpy64}, backends=["numpy"], drop_in=True, sizes=[64],
                  dtype="float64", progress=False, budget=0.01)
    assert set(df["backend"]) == {"numpy", "numba.njit (drop-in)", "numba.njit parallel (drop-in)"}
    df = wb.sweep("axpy", setup=setup, kernels={"numpy": axpy64}, backends=["numpy", "numba.njit (drop-in)"],
                  drop_in=True, sizes=[64], dtype="float64", progress=False, budget=0.01)
    assert set(df["backend"]) == {"numpy", "numba.njit (drop-in)"}


def test_drop_in_needs_one_function_to_run_unchanged(declared):
    with pytest.raises(ValueError, match="kernels=\\{'numpy': f\\}"):
        wb.sweep("two", setup=setup, kernels={"mine": axpy64, "other": spectrum}, drop_in=True, sizes=[8])
    with pytest.raises(ValueError, match="drop_in=True runs your own function"):
        wb.sweep("source_terms", drop_in=True, sizes=[8])


class DeviceArray:
    """A stand-in for a CuPy array: NumPy's ufuncs and functions dispatch to it; a conversion to a
    NumPy array is refused with CuPy's own words."""

    def __init__(self, a):
        self.a = np.asarray(a)
        self.shape, self.ndim = self.a.shape, self.a.ndim

    def __getitem__(self, key):
        return DeviceArray(self.a[key])

    def __radd__(self, other):
        return np.add(other, self)

    def __mul__(self, other):
        return np.multiply(self, other)

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
                        "NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [i.a if isinstance(i, DeviceArray) else i for i in inputs]
        return DeviceArray(getattr(ufunc, method)(*plain, **kwargs))

    def __add__(self, other):
        return np.add(self, other)

    def __array_function__(self, func, types, args, kwargs):
        plain = [a.a if isinstance(a, DeviceArray) else a for a in args]
        return DeviceArray(func(*plain, **kwargs))


def fake_cupy_phases(f, x):
    cp = SimpleNamespace(asarray=DeviceArray, asnumpy=lambda d: d.a, sqrt=np.sqrt)
    ctx = Context(size=x.size, dtype=x.dtype, session=SimpleNamespace(cp=cp))
    return dropin._cupy(f, (x,), ctx)


@pytest.mark.parametrize("f, said", [
    (lambda inp: np.asarray(inp[0]) * 2, "falls back to the host: it converts a CuPy array to NumPy"),
    (lambda inp: np.zeros(3), "falls back to the host: given CuPy arrays, it returned a NumPy array"),
])
def test_a_function_that_leaves_the_device_is_said_as_such_never_timed_as_a_gpu_point(f, said):
    phases = fake_cupy_phases(f, np.arange(3.0))
    phases.h2d()
    with pytest.raises(dropin.DropInError, match=said):
        phases.compute()


def per_element(inputs):
    (x,) = inputs
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * x[i]
    return x + total


def time_steps(inputs):
    (x,) = inputs
    for _ in range(10):                 # a fixed count of whole-array steps: what a GPU runs well
        x = x * 0.5 + 1.0
    return x


def test_a_python_loop_over_the_elements_is_said_as_a_fall_back_and_ends_the_call_early():
    phases = fake_cupy_phases(per_element, np.arange(20_000.0))
    phases.h2d()
    with pytest.raises(dropin.DropInError, match=r"falls back to the host: it loops in Python over the elements "
                                                 r"\(line \d+ of per_element ran 10,000 times in one call"):
        phases.compute()
    phases = fake_cupy_phases(time_steps, np.arange(20_000.0))
    phases.h2d()
    phases.compute()
    assert np.allclose(phases.d2h(), time_steps((np.arange(20_000.0),)))


def test_a_function_that_names_its_array_module_is_given_cupys():
    seen = []

    def f(inputs, xp=np):
        seen.append(xp)
        return xp.sqrt(inputs[0])
    phases = fake_cupy_phases(f, np.arange(4.0))
    phases.h2d()
    phases.compute()
    assert seen and seen[0] is not np and hasattr(seen[0], "asnumpy")


def test_a_function_that_stays_on_the_device_runs_through_numpys_dispatch_and_comes_back():
    phases = fake_cupy_phases(lambda inp: np.sqrt(inp[0]) + np.sum(inp[0]), np.arange(4.0))
    phases.h2d()
    phases.compute()
    assert np.allclose(phases.d2h(), np.sqrt(np.arange(4.0)) + 6.0)


MINE = '''
import numpy as np
from workbench.api import Workload, register

W = register(Workload("mine", make_inputs=lambda n, dt, v, rng: (rng.random(n).astype(dt),)))


@W.kernel("numpy")
def square(inputs):
    (x,) = inputs
    return x * x
'''


def test_the_command_lines_drop_in_runs_a_plug_ins_numpy_kernel_on_each_drop_in(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    from workbench.results.files import open_results
    (tmp_path / "mine.py").write_text(MINE)
    out = tmp_path / "out.csv"
    proc = subprocess.run([sys.executable, "-m", "workbench", "--plugin", "mine.py", "run", "-w", "mine", "--drop-in",
                           "-s", "2^10", "--budget", "0.02", "-q", "--out", str(out)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env={**__import__("os").environ,
                                                          "PYTHONPATH": str(Path(__file__).parents[1])})
    assert proc.returncode == 0, proc.stderr
    rows = open_results(out).frame.set_index("backend")
    assert set(rows.index) == {"numpy", "numba.njit (drop-in)", "numba.njit parallel (drop-in)"}
    assert (rows["status"] == "ok").all() and rows["verified"].all(), rows["message"].tolist()
    assert "did not load" not in proc.stderr
    assert proc.stderr.count("cupy (drop-in) not measured:") == 1
    # -b numpy --drop-in: NumPy and the drop-ins, as the window's Try it on every backend ticks them
    proc = subprocess.run([sys.executable, "-m", "workbench", "--plugin", "mine.py", "run", "-w", "mine", "--drop-in",
                           "-b", "numpy", "-s", "2^6", "--budget", "0.01", "-q", "--out", str(out), "--force"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert proc.returncode == 0, proc.stderr
    assert set(open_results(out).frame["backend"]) == {"numpy", "numba.njit (drop-in)", "numba.njit parallel (drop-in)"}


def test_the_command_lines_drop_in_refuses_a_workload_without_a_numpy_kernel_in_one_line():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "workbench", "run", "-w", "source_terms", "--drop-in", "-s", "2^10"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0
    assert "--drop-in: source_terms: drop-ins run the NumPy backend's own function" in proc.stderr
    assert "built-in workload has a backend written for each library already" in proc.stderr


def test_each_drop_in_answers_in_one_sentence_in_the_frame_and_the_summary(declared):
    from workbench.views import summary
    df = wb.sweep("spectrum", setup=setup, kernels={"numpy": spectrum}, drop_in=True, sizes=[256, 1024],
                  dtype="float64", progress=False, budget=0.02)
    answer = df.groupby("backend")["answer"].agg(lambda said: "|".join(sorted(set(said))))
    assert answer["numpy"] == ""
    assert answer["numba.njit (drop-in)"] == ("spectrum does not run unchanged as numba.njit (drop-in): does not "
                                              "compile under Numba: Unknown attribute 'rfft' of type Module(numpy.fft).")
    lines = summary.sentences(df, "numpy")
    assert answer["numba.njit parallel (drop-in)"] in lines
    fig = wb.plot(df, "runtime")            # the extra column is no obstacle to a chart
    assert fig.axes


def test_the_drop_ins_are_told_apart_from_each_other_and_from_numpy_in_colour_and_shape():
    from workbench.views import palette
    styles = [(palette.color(b), palette.marker(b)) for b in ("numpy", *dropin.NAMES)]
    assert len({c for c, _ in styles}) == len(styles) and len({m for _, m in styles}) == len(styles)


def test_a_drop_in_whose_points_were_stopped_or_not_believed_gets_no_answer_of_speed():
    from workbench.results import rows as results
    from workbench.views import summary

    def row(backend, status, message=""):
        return results.empty_row(workload="f", backend=backend, size=1024, dtype="float64", status=status,
                                 message=message, total_median_s=1e-3, compute_median_s=1e-3, repeats=5)
    frame = results.to_frame([
        row("numpy", "ok"),
        row("numba.njit (drop-in)", "cancelled", "stopped before it was measured"),
        row("numba.njit parallel (drop-in) x4", "implausible", "beyond the hardware: 900 GB/s is 9.0x the 100 GB/s"),
        row("cupy (drop-in)", "error", "falls back to the host: it converts a CuPy array to NumPy"),
    ])
    said = summary.answers(frame)
    assert said["numba.njit (drop-in)"] == ("f as numba.njit (drop-in): not answered, no point of it was measured "
                                            "(stopped before it was measured).")
    assert said["numba.njit parallel (drop-in) x4"].startswith(
        "f runs as numba.njit parallel (drop-in) x4, but its timings are not believed: beyond the hardware")
    assert said["cupy (drop-in)"] == ("f does not run unchanged as cupy (drop-in): falls back to the host: it "
                                      "converts a CuPy array to NumPy.")

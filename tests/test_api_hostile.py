"""workbench.sweep, plot and compare as a careless or hostile caller uses them: the caller's process
never runs the user's inputs, a failing reference fails its own points only, odd names and odd
arguments are read or refused with the argument named, and nothing comes back empty without a word."""
from __future__ import annotations

import ctypes
import logging
import math

import numpy as np
import pandas as pd
import pytest

import workbench
from workbench.catalog import backends as catalog
from workbench.catalog.defaults import with_float_dtype
from workbench.catalog.workloads import max_relative_error
from workbench.workspace import arguments

QUICK = dict(budget=0.01, progress=False)


@pytest.fixture(autouse=True)
def _restored(declared):
    """Each test here declares workloads and backends: they leave with it."""


def small_sizes_crash(n):
    """Inputs that take the process down below 1000: the footprint's probe sizes are 64 and 256."""
    if n < 1000:
        ctypes.string_at(0)
    return np.ones(n)


def test_inputs_that_crash_at_the_probe_sizes_never_run_in_the_callers_process():
    frame = workbench.sweep("hostile_setup", setup=small_sizes_crash, kernels={"numpy": lambda x: x * 2},
                            sizes=[4096], **QUICK)
    assert frame["status"].tolist() == ["ok"]          # and this test's process is still here to see it


def test_a_reference_that_raises_fails_its_own_points_and_the_others_are_measured_unverified():
    def broken(x):
        raise RuntimeError("no reference today")

    frame = workbench.sweep("hostile_reference", setup=np.ones, sizes=[1024],
                            kernels={"numpy": broken, "numpy-square": lambda x: x * x}, **QUICK)
    rows = frame.set_index("backend")
    assert rows.loc["numpy", "status"] == "error"
    assert rows.loc["numpy-square", "status"] == "ok" and not rows.loc["numpy-square", "verified"]
    assert "reference could not be made (RuntimeError: no reference today)" in rows.loc["numpy-square", "message"]


def test_any_text_names_the_callables_and_nan_where_the_reference_has_it_is_right():
    name = "a/b <b>x</b> =SUM(A1) " + "y" * 250
    frame = workbench.sweep(name, setup=lambda n: np.where(np.arange(n) % 7 == 0, np.nan, 1.0), sizes=[64],
                            kernels={"numpy": lambda x: x * x, "numpy-power": lambda x: x ** 2}, dtype="float64",
                            **QUICK)
    assert frame["workload"].unique().tolist() == [name] and frame["status"].tolist() == ["ok", "ok"]


def test_a_kernel_on_a_backend_that_cannot_run_here_is_said_and_the_others_measured(monkeypatch, caplog):
    real = catalog.probe
    monkeypatch.setattr(catalog, "probe", lambda name, deep=True: catalog.Availability(False, "no GPU in this test")
                        if name == "cupy" else real(name, deep))
    with caplog.at_level(logging.WARNING, logger="workbench.api"):
        frame = workbench.sweep("hostile_gpu", setup=np.ones, sizes=[64],
                                kernels={"numpy": lambda x: x * 2, "cupy": lambda x: x * 2}, **QUICK)
    assert frame["backend"].tolist() == ["numpy"]
    assert "cupy not measured: not usable here: no GPU in this test" in caplog.text
    with pytest.raises(ValueError, match="none of the kernels can run here: cupy: no GPU in this test"):
        workbench.sweep("hostile_gpu_only", setup=np.ones, sizes=[64], kernels={"cupy": lambda x: x}, **QUICK)


def test_a_name_the_file_does_not_declare_or_a_file_gone_is_refused_not_swept_as_another():
    from pathlib import Path
    eight = Path(__file__).parent / "plugins" / "eight_lines.py"
    with pytest.raises(ValueError, match="declares axpy: name one of them, not 'typo'"):
        workbench.sweep("typo", plugin=eight, sizes=[64], **QUICK)
    workbench.sweep("hostile_again", setup=np.ones, kernels={"numpy": lambda x: x}, sizes=[64], **QUICK)
    with pytest.raises(ValueError, match="registered in this process only"):
        workbench.sweep("hostile_again", sizes=[64], **QUICK)


@pytest.mark.parametrize("given, said", [
    (dict(sizes=[1000.7]), "sizes=1000.7: give a whole number"),
    (dict(sizes=[]), "sizes=\\[\\]: give at least one size"),
    (dict(sizes=[-5]), "-5 is not a size"),
    (dict(noise="x"), "noise='x': give a number"),
    (dict(repeats=1.5), "repeats=1.5: give a whole number"),
    (dict(dtype="no such type"), "dtype='no such type'"),
])
def test_an_argument_that_cannot_be_read_is_named(given, said):
    values = {**dict(backends=None, sizes=None, dtype="float32", noise=None, budget=None, repeats=None), **given}
    with pytest.raises(ValueError, match=said):
        arguments.experiment("matmul", values["backends"], values["sizes"], values["dtype"], values["noise"],
                             values["budget"], values["repeats"])


@pytest.mark.parametrize("given, said", [
    (dict(sizes=[64.5]), "sizes=64.5: give a whole number"),
    (dict(backends=5), "backends=5: give backend names"),
    (dict(dtype="int32"), "dtype='int32': give one of float32, float64"),
    (dict(point_timeout=-1), "point_timeout=-1"),
    (dict(kernels=[np.sum]), "kernels= maps a backend's name to a function"),
    (dict(kernels={"numpy": 5}), "not 'numpy'"),
])
def test_sweep_names_the_argument_it_cannot_read_before_any_engine_starts(given, said):
    given = {"kernels": {"numpy": np.sum}, "sizes": [64], **given}
    with pytest.raises(ValueError, match=said):
        workbench.sweep("hostile_arguments", setup=np.ones, **given, **QUICK)


def test_arguments_a_caller_would_write_are_read():
    e = arguments.experiment("matmul", "numpy, numba", 1024, np.float64, 0.02, 0.5, 3)
    assert (e.backends, e.sizes, e.dtype, e.noise, e.repeats) == (("numpy", "numba"), "1024", "float64", 0.02, 3)
    assert arguments.sizes_text([1024, "2^12", 4096.0]) == "1024,2^12,4096"
    assert arguments.timeout(None, 300.0) == 300.0
    with pytest.raises(ValueError, match="more than 0"):
        arguments.timeout(0, 300.0)


def test_nan_and_inf_count_as_right_only_where_the_reference_has_them():
    ref = np.array([1.0, np.nan, np.inf, 2.0])
    assert max_relative_error(ref.astype(np.float32), ref) == 0.0
    assert max_relative_error(np.array([1.0, np.nan, -np.inf, 2.0]), ref) == math.inf
    assert max_relative_error(np.array([1.0, 5.0, np.inf, 2.0]), ref) == math.inf
    assert max_relative_error(np.array([1.0, np.nan, np.inf, 2.0]), np.array([1.0, 3.0, np.inf, 2.0])) == math.inf


def test_a_frames_float_columns_take_the_points_dtype():
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [1, 2], "c": ["x", "y"]})
    cast = with_float_dtype(frame, np.float32)
    assert [str(t) for t in cast.dtypes[["a", "b"]]] == ["float32", "int64"] and cast["c"].tolist() == ["x", "y"]
    assert with_float_dtype(frame["a"], np.float32).dtype == np.float32


def test_compare_without_a_common_point_and_plot_of_nothing_keep_their_shape():
    a = pd.DataFrame({"workload": ["w"], "backend": ["numpy"], "size": [64], "dtype": ["float32"], "variant": [""],
                      "status": ["ok"], "total_median_s": [1e-3]})
    b = a.assign(size=[128])
    found = workbench.compare(a, b)
    assert found.empty and {"ratio", "verdict", "why"} <= set(found.columns)
    with pytest.raises(ValueError, match="figure='bogus'"):
        workbench.compare(a, b, figure="bogus")
    with pytest.raises(ValueError, match="min_effect=-1"):
        workbench.compare(a, b, min_effect=-1)
    with pytest.raises(ValueError, match="not a sweep's rows"):
        workbench.compare(pd.DataFrame({"x": [1]}), b)
    drawn = workbench.plot(pd.DataFrame(), "runtime")
    assert any("No point to draw" in t.get_text() for ax in drawn.axes for t in ax.texts), \
        [t.get_text() for ax in drawn.axes for t in ax.texts]


def test_a_built_in_name_and_a_name_that_is_no_name_are_refused_when_declared():
    with pytest.raises(workbench.PluginError, match="'source_terms' is built in"):
        workbench.register(workbench.Workload("source_terms", make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))
    for name in (5, "", " padded", "numba x4"):
        with pytest.raises(ValueError, match="a backend's name"):
            workbench.backend(name)


INTERRUPTED = """
import signal, sys, time
import numpy as np
import workbench

def setup(n):
    if n >= 4096:                   # the third size: the test's cue, then a wait it interrupts
        open(sys.argv[1], "w").close()
        time.sleep(60)
    return np.ones(n)

if __name__ == "__main__":
    df = workbench.sweep("interrupted", setup=setup, kernels={"numpy": lambda x: x * 2}, sizes=[64, 1024, 4096],
                         budget=0.01, progress=False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # a second Ctrl-C after the sweep returned is not the test's
    print("rows", df["size"].tolist(), df["status"].tolist())
"""


def test_ctrl_c_twice_in_a_notebook_cell_still_returns_the_points_measured(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    cue = tmp_path / "third-size"
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED, str(cue)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not cue.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)                # polling for the child's cue file, not waiting on a thread
    assert cue.exists(), proc.communicate()[1][-2000:]
    os.killpg(proc.pid, signal.SIGINT)           # as a terminal or Jupyter's interrupt sends it
    time.sleep(0.2)                              # a user's pause, not a wait on a thread
    os.killpg(proc.pid, signal.SIGINT)           # and again, impatient: the engine ends at once
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert "rows [64, 1024] ['ok', 'ok']" in out, out + err[-2000:]
    assert "sweep stopped by Ctrl-C: 2 point(s) measured" in err and "Traceback" not in err, err[-2000:]


def crashes(x):
    ctypes.string_at(0)


def test_a_reference_that_crashes_is_named_as_such_not_blamed_on_the_kernel_measured_next():
    frame = workbench.sweep("hostile_crash", setup=np.ones, sizes=[1024],
                            kernels={"numpy": crashes, "numpy-square": lambda x: x * x}, **QUICK)
    assert sorted(frame["backend"]) == ["numpy", "numpy-square"] and (frame["status"] == "error").all()
    for message in frame["message"]:
        assert "while making the inputs and the reference at size 1,024" in message, message


def sleeps(x):
    import time
    time.sleep(600)


def test_a_reference_that_hangs_costs_one_time_limit_a_size_not_one_a_kernel():
    """Every point of a size shares its inputs and reference: a fresh engine would only hang again."""
    frame = workbench.sweep("hostile_hang", setup=np.ones, sizes=[1024, 2048], point_timeout=2,
                            kernels={"numpy": sleeps, "numpy-square": lambda x: x * x}, **QUICK)
    assert frame["status"].tolist() == ["error"] * 4
    assert all("making the inputs and the reference at size" in m for m in frame["message"])
    assert len(frame.attrs["troubles"]) == 2, frame.attrs["troubles"]      # one engine ended a size


def test_the_runtimes_the_catalogue_names_are_the_ones_the_measuring_layer_opens():
    from workbench.measure import sessions
    assert tuple(sessions.SESSIONS) == catalog.RUNTIMES and tuple(sessions.PREPARATIONS) == catalog.PREPARATIONS
    for bad, said in (({"sesion": "cpu"}, "no field sesion"), ({"session": "a:b:c"}, "session='a:b:c'"),
                      ({"session": "tpu"}, "session='tpu'"), ({"engine": "jax"}, "engine='jax'")):
        with pytest.raises(ValueError, match=said):
            workbench.backend("hostile-fields", like="numpy", **bad)
    assert workbench.backend("hostile-own", like="numpy", session="mypackage.timing:Session").session \
        == "mypackage.timing:Session"


# A file that, once imported, saves a crashing version of itself: what loads in the caller must be
# what the vetting child loaded, so the caller vets it again rather than import what is on disk now.
REWRITES_ITSELF = """import numpy as np
from workbench.api import Workload, register
register(Workload("rewrites_itself", make_inputs=lambda n, dt, v, rng: np.ones(n, dt))).kernel("numpy")(abs)
with open(__file__, "w") as f:
    f.write("import ctypes\\nctypes.string_at(0)\\n")
"""


def test_a_file_saved_again_while_it_is_vetted_is_vetted_again_never_loaded_unvetted(tmp_path):
    from workbench.measure import plugins
    path = tmp_path / "rewrites_itself.py"
    path.write_text(REWRITES_ITSELF)
    with pytest.raises(workbench.PluginError, match="crashed the interpreter"):
        plugins.load(path)


def test_a_backend_name_another_file_declared_is_refused_and_the_same_file_may_declare_it_again(tmp_path):
    from workbench.catalog.workloads import REGISTRY
    for name, like in (("a", "numpy"), ("b", "cupy")):
        (tmp_path / f"{name}.py").write_text(
            f"import numpy as np\nfrom workbench.api import Workload, backend, register\n"
            f"backend('hostile-shared', like={like!r})\n"
            f"register(Workload('hostile_{name}', make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))"
            f".kernel('hostile-shared')(abs)\n")
    assert REGISTRY.load_file(tmp_path / "a.py") == ["hostile_a"]
    assert REGISTRY.load_file(tmp_path / "a.py") == ["hostile_a"]         # the same file again: an edit
    with pytest.raises(workbench.PluginError, match=f"'hostile-shared' is declared by {tmp_path / 'a.py'} already"):
        REGISTRY.load_file(tmp_path / "b.py")
    assert catalog.BACKENDS["hostile-shared"].device == "cpu"


# Its kernel, at 1024, saves the file anew (the workload renamed) and takes its engine down.
EDITED_UNDER_THE_SWEEP = """import ctypes
import numpy as np
from workbench.api import Workload, register

def kernel(x):
    if len(x) == 1024:
        with open(__file__) as f:
            text = f.read()
        with open(__file__, "w") as f:
            f.write(text.replace('"edited_under"', '"renamed_since"'))
        ctypes.string_at(0)
    return x * 2

register(Workload("edited_under", make_inputs=lambda n, dt, v, rng: np.ones(n, dt))).kernel("numpy")(kernel)
"""


def test_a_file_changed_during_the_sweep_ends_it_when_an_engine_must_restart(tmp_path):
    path = tmp_path / "edited_under.py"
    path.write_text(EDITED_UNDER_THE_SWEEP)
    frame = workbench.sweep("edited_under", plugin=path, sizes=[64, 1024, 4096], **QUICK)
    assert frame["size"].tolist() == [64, 1024] and frame["status"].tolist() == ["ok", "error"]
    assert any(f"{path} changed during the sweep: the points left were not measured" in t
               for t in frame.attrs["troubles"]), frame.attrs["troubles"]

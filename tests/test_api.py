"""The public surface (workbench.api, docs/API.md): old import paths, the eight-line plug-in,
sweeps of plain callables, the notebook example, and what examples and plug-ins may import."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import workbench
from workbench.api import Workload, backend
from workbench.catalog.workloads import REGISTRY

ROOT = Path(__file__).parents[1]
EIGHT = ROOT / "tests" / "plugins" / "eight_lines.py"


@pytest.fixture(autouse=True)
def _restored(declared):
    """Each test here declares workloads and backends: they leave with it."""


@pytest.mark.parametrize("old", ["workbench.registry", "workbench.catalog.registry"])
def test_a_plugin_on_an_old_path_loads_and_is_warned(tmp_path, old):
    name = "old_" + old.replace(".", "_")
    path = tmp_path / f"{name}.py"
    path.write_text(f"import numpy as np\nfrom {old} import Workload, register\n"
                    f"w = register(Workload({name!r}, make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))\n"
                    "w.kernel('numpy')(lambda x: x * 2)\n")
    with pytest.warns(DeprecationWarning, match=f"^{old} is deprecated; import from workbench.api$"):
        assert REGISTRY.load_file(path) == [name]


def test_the_eight_line_plugin_runs_a_sweep_on_the_command_line(tmp_path):
    out = tmp_path / "x.csv"
    proc = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-m", "workbench", "--plugin", str(EIGHT),
                           "run", "-w", "axpy", "-s", "2^10,2^12", "--budget", "0.05", "--out", str(out)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(out)
    assert sorted(set(frame["backend"])) == ["numpy", "numpy-blas"]
    assert (frame["status"] == "ok").all() and len(frame) == 4


def test_the_eight_line_plugin_is_the_one_in_the_docs():
    code = EIGHT.read_text().split('"""', 2)[2].strip()
    assert len(code.splitlines()) == 7          # and the docstring: eight
    assert code in (ROOT / "docs" / "API.md").read_text()


def test_a_workload_needs_only_a_name_and_its_inputs():
    w = Workload("two_words", make_inputs=lambda n, dt, v, rng: (np.ones(n, dt), np.ones((n, n), dt)))
    w.kernel("numpy")(lambda xs: xs[1] @ xs[0])
    assert (w.title, w.kind, w.flops(10)) == ("Two words", "array math", 0.0)
    assert w.footprint(512, 4) == pytest.approx(4 * w.footprint(256, 4), rel=0.05)   # n^2 inputs
    inputs = w.make_inputs(3, np.dtype(np.float32), "", np.random.default_rng(0))
    reference = w.reference(inputs)
    assert reference.dtype == np.float64 and reference.tolist() == [3.0, 3.0, 3.0]


def test_a_builtin_backend_cannot_be_declared_again():
    with pytest.raises(ValueError, match="built in"):
        backend("numpy", like="numba")


def test_a_declared_backend_is_as_usable_as_the_library_it_imports():
    """A plug-in's backend, declared after the probes ran: what they found of its library holds for it."""
    from workbench.catalog import backends as catalog
    backend("api-test-cupy", like="cupy")
    backend("api-test-numpy", like="numpy")
    broken = catalog.Availability(False, "installed but broken: CUDA_ERROR_NO_DEVICE")
    known = {"cupy": broken, "numpy": catalog.Availability(True, "", "2.2")}
    assert catalog.availability_among("api-test-cupy", known) is broken
    assert catalog.availability_among("api-test-numpy", known).usable
    assert catalog.availability_among("api-test-cupy", {}) is None            # a GPU library: not known yet
    assert catalog.availability_among("api-test-numpy", {}).usable            # a CPU one: probed at once
    assert catalog.availability_among("no-such-backend", known) is None


def test_sweep_of_plain_callables_gives_ok_rows_and_a_raising_kernel_an_error_row():
    frame = workbench.sweep("api_test_kernels", setup=lambda n: np.linspace(0, 1, n), sizes=[2 ** 10],
                            kernels={"numpy": lambda x: x * x, "api-raising": lambda x: [][0]},
                            budget=0.02, progress=False)
    rows = frame.set_index("backend")
    assert rows.loc["numpy", "status"] == "ok" and rows.loc["numpy", "dtype"] == "float32"
    assert rows.loc["api-raising", "status"] == "error"
    assert "IndexError" in rows.loc["api-raising", "message"] or "index" in rows.loc["api-raising", "message"]
    assert frame.attrs["environment"] and frame.attrs["settings"]["workload"] == "api_test_kernels"


def test_the_notebook_example_sweeps_plots_compares_and_writes_a_png(tmp_path):
    proc = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", str(ROOT / "examples" / "notebook.py"),
                           str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=280)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for png in ("source_terms_runtime.png", "squares_runtime.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "verdict" in proc.stdout


def test_the_readme_example_runs_as_written(tmp_path):
    """README's perfplot-style comparison, copied out of the README and run as a user runs it."""
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- readme-example: squares.py -->", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "squares.py").write_text(block)
    proc = subprocess.run([sys.executable, "squares.py"], capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count(" ok") == 10 and (tmp_path / "squares.png").stat().st_size > 10_000


def test_a_plugin_on_an_old_path_is_told_once_on_the_command_line(tmp_path):
    """Python shows a DeprecationWarning only from __main__: the plug-in's author hears it all the
    same, once, though the engine and the vetting child load the file too."""
    path = tmp_path / "old_cli.py"
    path.write_text("import numpy as np\nfrom workbench.registry import Workload, register\n"
                    "w = register(Workload('old_cli', make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))\n"
                    "w.kernel('numpy')(lambda x: x * 2)\n")
    proc = subprocess.run([sys.executable, "-m", "workbench", "--plugin", str(path), "run", "-w", "old_cli",
                           "-s", "2^10", "--budget", "0.02", "-q"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("workbench.registry is deprecated; import from workbench.api") == 1
    assert f"{path}:2: DeprecationWarning" in proc.stderr


def test_a_plugin_is_vetted_with_no_folder_of_ours_shadowing_its_imports(tmp_path):
    """The vetting child imports from the path the engine has: no sub-package of workbench (core,
    catalog, results) stands in for a top-level module of the same name."""
    from workbench.measure import plugins
    path = tmp_path / "shadow.py"
    path.write_text("import importlib.util\nimport numpy as np\nfrom workbench.api import Workload, register\n"
                    "found = [m for m in ('core', 'catalog', 'results', 'measure') if importlib.util.find_spec(m)]\n"
                    "assert not found, f'shadowed: {found}'\n"
                    "register(Workload('shadow', make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))"
                    ".kernel('numpy')(lambda x: x * 2)\n")
    plugins.vet(path)


def test_the_default_reference_runs_the_numpy_kernel_at_the_points_size():
    """Inputs of shape (2, n): the reference's Context says n, as the timed kernel's does, not 2."""
    w = Workload("ctx_size", make_inputs=lambda n, dt, v, rng: rng.random((2, n)).astype(dt))

    @w.implement("numpy")
    def factory(xy, ctx):
        out = np.empty(ctx.size, xy.dtype)
        return lambda: np.add(xy[0], xy[1], out=out)

    inputs = w.make_inputs(64, np.dtype(np.float32), "", np.random.default_rng(0))
    assert w.reference_at(inputs, 64) == pytest.approx((inputs[0] + inputs[1]).astype(np.float64))


OLD_STAR = ("import numpy as np\nfrom workbench.registry import *\n"
            "w = register(Workload('old_star', make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))\n"
            "w.kernel('numpy')(lambda x: x * 2)\n")
# The A/A plug-in as it was written before the layers split: its own backends in the table.
OLD_BACKENDS = '''import numpy as np
from workbench import backends
from workbench.registry import Workload, register
for _name in ("old-twin-a", "old-twin-b"):
    backends.BACKENDS.setdefault(_name, backends.Backend(
        _name, _name, "cpu", "numpy", ("numpy",), "workbench.measure:CpuSession", "identical NumPy code"))
w = register(Workload("old_twins", make_inputs=lambda n, dt, v, rng: np.ones(n, dt)))
w.kernel("old-twin-a")(lambda x: x * 2)
w.kernel("old-twin-b")(lambda x: x * 2)
'''


@pytest.mark.parametrize("text, backends_run", [(OLD_STAR, ["numpy"]), (OLD_BACKENDS, ["old-twin-a", "old-twin-b"])],
                         ids=["star-import", "own-backends"])
def test_a_plugin_written_before_the_split_still_sweeps_and_is_told_where_to_go(tmp_path, text, backends_run):
    path = tmp_path / "old_plugin.py"
    path.write_text(text)
    workload = "old_star" if "old_star" in text else "old_twins"
    proc = subprocess.run([sys.executable, "-m", "workbench", "--plugin", str(path), "run", "-w", workload,
                           "-b", ",".join(backends_run), "-s", "2^10", "--budget", "0.02", "--out",
                           str(tmp_path / "r.csv")], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = pd.read_csv(tmp_path / "r.csv")
    assert sorted(rows["backend"]) == backends_run and (rows["status"] == "ok").all()
    assert "is deprecated; import from workbench.api" in proc.stderr

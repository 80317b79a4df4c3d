"""Size parsing, the result files, the registry's plug-ins and the Qt-free core."""
from __future__ import annotations
from workbench.results import files as result_files

import subprocess
import sys
import textwrap

import pytest

from workbench.results import rows as results
from workbench.core.sizes import parse_int, parse_sizes, steps


@pytest.mark.parametrize("text,expected", [
    ("1024", [1024]), ("2^10,2^12", [1024, 4096]), ("2^10:2^13", [1024, 2048, 4096, 8192]),
    ("16:256:x4", [16, 64, 256]), ("1e3,10_000", [1000, 10000]), ("3:10", [3, 6]),
    ("2^10:2^11,2^11:2^12", [1024, 2048, 4096]), ("256,256,1024", [256, 1024]),
])
def test_parse_sizes(text, expected):
    assert parse_sizes(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "0", "-5", "2^", "8:4", "4:8:x1", "1.5", "4:8:9:10"])
def test_parse_sizes_refuses(text):
    with pytest.raises(ValueError):
        parse_sizes(text)


@pytest.mark.parametrize("text,expected", [
    ("10,000", 10_000), ("10,000,000", 10_000_000), ("1,024", 1024), (" 2^20 ", 2**20), ("10 000", 10_000),
])
def test_a_size_field_reads_thousands_separators(text, expected):
    """The window shows 10,000 in a size field; it must read back what it shows."""
    assert parse_int(text) == expected


@pytest.mark.parametrize("text", ["1,00", "10,0000", ",100", "100,", "1,,000"])
def test_a_size_field_refuses_misplaced_separators(text):
    with pytest.raises(ValueError):
        parse_int(text)


def test_log_steps():
    assert steps(1024, 2**20, 11) == [2 ** k for k in range(10, 21)]
    assert steps(10, 10, 5) == [10]


def test_results_round_trip(tmp_path):
    rows = [results.empty_row(workload="w", backend="numpy", device="CPU", size=s, dtype="float32",
                              status="ok", compute_median_s=1e-3 * s, message="" if s else "x")
            for s in (1, 2)]
    frame = results.to_frame(rows)
    env = {"cpu": "test", "libraries": {"numpy": "2"}}
    for name in ("r.csv", "r.json"):
        path = result_files.save(frame, tmp_path / name, env)
        back, env_back = result_files.load(path)
        assert list(back.columns) == list(results.COLUMNS)
        assert back["compute_median_s"].tolist() == pytest.approx([1e-3, 2e-3])
        assert env_back == env
    with pytest.raises(ValueError):
        result_files.save(frame, tmp_path / "r.txt", env)


def test_stages_survive_the_files_and_old_files_read_without_them(tmp_path):
    staged = results.encode_stages({"frame": 2e-3, "frame->array": 5e-4})
    rows = [results.empty_row(workload="pipeline", backend=b, device="CPU", size=10, dtype="float32",
                              status="ok", stages=s) for b, s in (("cpu-stack", staged), ("numpy", ""))]
    frame = results.to_frame(rows)
    for name in ("s.csv", "s.json"):
        back, _ = result_files.load(result_files.save(frame, tmp_path / name, {}))
        assert back["stages"].tolist() == [staged, ""]
        assert list(results.decode_stages(back["stages"][0]).items()) == [("frame", 2e-3), ("frame->array", 5e-4)]
    old = tmp_path / "old.csv"            # written before the stages column existed
    old.write_text("workload,backend,size,dtype,status\npipeline,cpu-stack,10,float32,ok\n")
    back, _ = result_files.load(old)
    assert back["stages"].tolist() == [""] and results.decode_stages(back["stages"][0]) == {}


def test_registry_loads_an_external_file(tmp_path, registry):
    plugin = tmp_path / "my_workload.py"
    plugin.write_text(textwrap.dedent("""
        import numpy as np
        from workbench.catalog.workloads import Workload, register
        W = register(Workload(name="triple", title="Triple", kind="kernels", description="x*3",
                              lesson="none", size_unit="elements", default_sizes=(8,),
                              make_inputs=lambda n, dt, v, rng: (np.ones(n, dt),),
                              reference=lambda inp: inp[0].astype(np.float64) * 3,
                              flops=lambda n: n, bytes_moved=lambda n, i: 2 * n * i,
                              footprint=lambda n, i: 4 * n * i))
        W.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 3))
    """))
    assert registry.load_file(plugin) == ["triple"]
    from workbench.measure import protocol
    from workbench.measure.engine import SweepSpec, run_sweep
    rows = protocol.rows(run_sweep(SweepSpec("triple", ("numpy",), (8,), min_repeats=1, budget_s=0)))
    assert rows[0]["status"] == "ok"


def test_registry_loads_entry_points(monkeypatch, registry, tmp_path):
    import importlib.metadata
    (tmp_path / "ep_workload.py").write_text(
        "from helpers import synthetic\nfrom workbench.catalog.workloads import register\n"
        "register(synthetic('from-entry-point'))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = importlib.metadata.EntryPoint("mine", "ep_workload", "gpu_workbench.workloads")
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None: [ep] if group == "gpu_workbench.workloads" else [])
    registry.reload_entry_points()
    assert "from-entry-point" in registry.names()


def test_listing_workloads_imports_nothing_heavy():
    code = ("import sys; from workbench.catalog.workloads import REGISTRY; REGISTRY.all();"
            "from workbench.catalog.backends import probe_all; probe_all(deep=False);"
            "print(sorted(m for m in ('numba', 'cupy', 'cudf', 'pandas', 'PySide6') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"



def test_an_exact_amount_reads_back_as_itself():
    from workbench.core.sizes import fmt_bytes_exact, parse_bytes
    for n in (1280 * 2 ** 20, 8 * 2 ** 30, 1000, 3 * 2 ** 29, 2 ** 40, 1536):
        assert parse_bytes(fmt_bytes_exact(n)) == n
    assert fmt_bytes_exact(1280 * 2 ** 20) == "1280MiB" and fmt_bytes_exact(8 * 2 ** 30) == "8GiB"


@pytest.mark.parametrize("text", ["", "GiB", "8 GiBs", "eight GiB", "8XB", "-8GiB", "0", "0GiB", "8 Gi B",
                                  "1e400", "8GiB;rm"])
def test_parse_bytes_refuses_junk_in_one_line(text):
    from workbench.core.sizes import parse_bytes
    with pytest.raises(ValueError) as err:
        parse_bytes(text)
    assert "\n" not in str(err.value) and str(err.value)


def test_built_in_workloads_are_the_modules_of_their_package_in_their_declared_order():
    """No list to keep: every module of the package that registers a workload is built in, and the
    order a user meets them (the command line's list, the window's tree) is their ``order``."""
    import importlib
    import pkgutil

    import workloads
    from workbench.catalog.workloads import REGISTRY
    modules = [importlib.import_module(f"workloads.{m.name}") for m in pkgutil.iter_modules(workloads.__path__)]
    builtin = [n for n in REGISTRY.names() if REGISTRY.builtin(n)]
    assert set(builtin) == {m.W.name for m in modules if hasattr(m, "W")}
    assert builtin == ["matmul", "fft", "source_terms", "flux", "reduction", "stencil", "divergence", "spmv",
                       "transfer", "overlap", "groupby", "merge", "filter", "sort", "pipeline"]

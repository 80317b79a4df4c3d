"""The layers of the tree, as pyproject.toml's import-linter contracts state them, and no import circle.

The contracts are checked on the tree itself and on copies of it with one wrong-way import added,
so a contract that stopped covering a package (a renamed layer, an ``ignore_imports`` too wide)
fails here rather than keeping quiet.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

# import-linter (and its grimp) is a test-only tool: a machine without it (the GPU machine's image)
# skips these checks, saying so, rather than failing to collect the whole run.
grimp = pytest.importorskip("grimp", reason="import-linter's grimp is not installed (pip install import-linter)")

ROOT = Path(__file__).parents[1]
PACKAGES = ("workbench", "workloads", "panels")
# What users write, as the public-surface contract names it: folders, and single scripts in a folder.
USERS_FILES = ("examples", "tests/plugins")
USERS_SCRIPTS = ("benchmarks/aa_plugin.py", "benchmarks/faults_plugin.py")
LINT = Path(sys.executable).with_name("lint-imports")


def lint(where: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(where))
    return subprocess.run([str(LINT), "--no-cache"], capture_output=True, text=True, cwd=where, env=env)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the three packages, the users' files and the contracts, to break on purpose."""
    where = tmp_path_factory.mktemp("tree")
    for part in PACKAGES + USERS_FILES:
        shutil.copytree(ROOT / part, where / part, ignore=shutil.ignore_patterns("__pycache__", "*.png"))
    for script in USERS_SCRIPTS:
        (where / script).parent.mkdir(exist_ok=True)
        shutil.copy(ROOT / script, where / script)
    shutil.copy(ROOT / "pyproject.toml", where)
    return where


def test_the_tree_keeps_every_contract():
    proc = lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 kept, 0 broken" in proc.stdout


def test_the_public_surface_contract_forbids_every_layer_but_the_api():
    """A layer added later is forbidden to users' files too, or this fails."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    public = next(c for c in contracts if c["type"] == "forbidden" and "examples" in c["source_modules"])
    layers = {f"workbench.{p.name}" for p in (ROOT / "workbench").iterdir() if (p / "__init__.py").exists()}
    assert set(public["forbidden_modules"]) == (layers | {"workloads", "panels"}) - {"workbench.api"}


# (module that gains the import, the import, the line the linter must print)
WRONG_WAY = [
    ("workbench/core/stats.py", "from workbench.views import palette",
     "workbench.core.stats -> workbench.views.palette"),
    ("workbench/results/files.py", "from workbench.measure import engine",
     "workbench.results.files -> workbench.measure.engine"),
    ("workbench/measure/engine.py", "import workloads.matmul",
     "workbench.measure.engine -> workloads.matmul"),
    ("workbench/views/summary.py", "from workbench import lessons",
     "workbench.views.summary -> workbench.lessons"),
    ("workbench/cli/commands.py", "import panels.window",
     "workbench.cli.commands -> panels.window"),
    ("workbench/workspace/session.py", "from workbench.cli import commands",
     "workbench.workspace.session -> workbench.cli.commands"),
    ("workbench/views/summary.py", "from workbench.workspace import session",
     "workbench.views.summary -> workbench.workspace.session"),
    # users' files: a plug-in or an example that reaches past workbench.api
    ("examples/notebook.py", "from workbench.measure import engine",
     "examples.notebook -> workbench.measure.engine"),
    ("tests/plugins/eight_lines.py", "from workbench.catalog.workloads import REGISTRY",
     "tests.plugins.eight_lines -> workbench.catalog.workloads"),
    ("benchmarks/aa_plugin.py", "import workloads.matmul",
     "benchmarks.aa_plugin -> workloads.matmul"),
]


@pytest.mark.parametrize("module, line, reported", WRONG_WAY, ids=[w[0] for w in WRONG_WAY])
def test_a_wrong_way_import_breaks_the_layers(tree, module, line, reported):
    path = tree / module
    before = path.read_text()
    try:
        path.write_text(before + f"\n{line}  # noqa\n")
        proc = lint(tree)
    finally:
        path.write_text(before)
    assert proc.returncode != 0
    assert reported in proc.stdout, proc.stdout


def test_the_copy_is_sound_again_after_each_break(tree):
    """Each case above undoes its import, so a failure is the import's, not one left behind."""
    proc = lint(tree)
    assert proc.returncode == 0, proc.stdout


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other round a circle (Tarjan's components, size > 1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in graph.modules or w.split(".")[0] not in PACKAGES:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for module in sorted(graph.modules):
        if module.split(".")[0] in PACKAGES and module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_round_a_circle():
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    assert circles(grimp.build_graph(*PACKAGES)) == []


def test_the_circle_finder_finds_a_circle(tmp_path):
    """The check above on a package made to hold one circle: a -> b -> c -> a."""
    pkg = tmp_path / "circ"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, target in (("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")):
        (pkg / f"{name}.py").write_text(f"from circ import {target}\n")
    sys.path.insert(0, str(tmp_path))
    try:
        graph = grimp.build_graph("circ")
    finally:
        sys.path.remove(str(tmp_path))
    global PACKAGES
    saved, PACKAGES = PACKAGES, ("circ",)
    try:
        assert circles(graph) == [["circ.a", "circ.b", "circ.c"]]
    finally:
        PACKAGES = saved


#: The most lines a module of ours holds (issue 30): past it a module is doing several jobs.
MOST_LINES = 500


def test_no_module_holds_more_than_its_share_of_lines():
    root = Path(__file__).resolve().parents[1]
    big = {str(p.relative_to(root)): n for folder in ("workbench", "panels", "workloads")
           for p in sorted((root / folder).rglob("*.py"))
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MOST_LINES}
    assert not big, f"over {MOST_LINES} lines: {big}"

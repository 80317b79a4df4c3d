"""The bad-input corpus: every field, option and file a user can get wrong, on the command line and
in the window, each answered in one clear line (exit status 2) before any work is done.

The command line runs in this process (``cli.main``), so the corpus stays fast; the subprocess
tests in test_cli.py and test_cli_charts.py check that the installed command behaves the same. A case
that slipped past its check would start a sweep, print a table and fail the "nothing on stdout" assertion.
"""
from __future__ import annotations

import os
import textwrap

import pytest

from workbench.cli import commands as cli
from workbench.measure import plugins
from workbench.catalog.workloads import REGISTRY

RUN = ["run", "-w", "source_terms", "-b", "numpy", "-s", "256", "-r", "1", "--budget", "0"]


def _with(option: str, value: str) -> list[str]:
    argv = list(RUN)
    if option in argv:
        argv[argv.index(option) + 1] = value
    else:
        argv += [option, value]
    return argv


BAD_SIZES = [
    ("", "no size given"), (" ", "no size given"), (",", "cannot read"), ("abc", "cannot read 'abc'"),
    ("0", "must be positive"), ("-1", "cannot read '-1'"), ("1e400", "too large"), ("1.5", "cannot read"),
    ("nan", "cannot read"), ("inf", "cannot read"), ("2^", "cannot read"), ("^2", "cannot read"),
    ("2^-1", "cannot read"), ("2^0.5", "cannot read"), ("2^99999", "too large"), ("99999^64", "too large"),
    ("10**9", "cannot read"), ("1:2:xinf", "factor"), ("1:2^60:x1.0000000001", "too large"),
    ("1:2^40:x1.0000000001", "more than 1000 sizes"), ("1:2:x1", "above 1"), ("1:2:x0", "above 1"),
    ("1:2:x-2", "factor"), ("1:2:xnan", "factor"), ("1:2:x", "factor"), ("2^10:2^20:+2", "factor"),
    ("2^10:2^20:x1e1", "factor"), ("8:4", "above its end"), ("4:8:9:10", "cannot read the range"),
    ("9" * 400, "too long"), ("1,,2", "cannot read ''"), ("0x10", "cannot read"), ("\x00", "cannot read"),
    ("$(reboot)", "cannot read"), ("1;2", "cannot read"), ("1e-3", "cannot read"), ("2^54", "too large"),
    ("2^53", "of host memory"), ("1:", "cannot read ''"), (":5", "cannot read ''"), ("::", "cannot read"),
    ("1:1e400", "too large"), ("2^1000:2^1001", "too large"), ("2^40", "of host memory"), ("1,00", "must be positive"), ("10,0000", "must be positive"),
]

BAD_OPTIONS = [
    (["run", "-w", "", "-b", "numpy"], "unknown workload ''"),
    (["run", "-w", "MATMUL", "-b", "numpy"], "unknown workload 'MATMUL'"),
    (["run", "-w", "../etc/passwd", "-b", "numpy"], "unknown workload"),
    (["run", "-w", "x" * 10_000, "-b", "numpy"], "unknown workload"),
    (["run", "-w", "source_terms;ls", "-b", "numpy"], "unknown workload"),
    (["run", "-w", " source_terms", "-b", "numpy"], "unknown workload"),
    (["run"], "required: --workload"),
    (["frobnicate"], "invalid choice"),
    (["run", "-w", "source_terms", "--sizes"], "expected one argument"),
    (["run", "-w", "source_terms", "--no-such-option"], "unrecognized arguments"),
    (_with("-b", ""), "no backend chosen"),
    (_with("-b", ","), "no backend chosen"),
    (_with("-b", "numpy,numpy"), "numpy is named twice"),
    (_with("-b", "NUMPY"), "unknown backend 'NUMPY'"),
    (_with("-b", "x" * 5000), "unknown backend"),
    (_with("-b", "pandas"), "no pandas implementation"),
    (_with("-b", "numpy;rm -rf ~"), "unknown backend"),
    (_with("-d", ""), "does not support dtype ''"),
    (_with("-d", "float"), "use one of: float32, float64"),
    (_with("-d", "int32"), "use one of"),
    (_with("-d", "complex64"), "use one of"),
    (_with("-d", "float32,float64"), "use one of"),
    (_with("-d", "FLOAT32"), "use one of"),
    (_with("-d", "float16"), "use one of"),
    (_with("-r", "0"), "repeats must be between 1"),
    (_with("-r", "-1"), "repeats must be between 1"),
    (_with("-r", "1000000000"), "repeats must be between 1"),
    (_with("-r", "9" * 30), "repeats must be between 1"),
    (_with("-r", "abc"), "invalid int value"),
    (_with("-r", "1.5"), "invalid int value"),
    (_with("-r", ""), "invalid int value"),
    (_with("-r", "1e3"), "invalid int value"),
    (_with("--budget", "-1"), "the budget must be between 0"),
    (_with("--budget", "nan"), "the budget must be between 0"),
    (_with("--budget", "inf"), "the budget must be between 0"),
    (_with("--budget", "1e400"), "the budget must be between 0"),
    (_with("--budget", "1e9"), "the budget must be between 0"),
    (_with("--budget", "abc"), "invalid float value"),
    (_with("--budget", ""), "invalid float value"),
    (_with("--point-timeout", "0"), "positive, finite"),
    (_with("--point-timeout", "-1"), "positive, finite"),
    (_with("--point-timeout", "nan"), "positive, finite"),
    (_with("--point-timeout", "inf"), "positive, finite"),
    (_with("--point-timeout", "1e400"), "positive, finite"),
    (_with("--point-timeout", "abc"), "invalid float value"),
    (_with("--device-memory-limit", ""), "cannot read '' as an amount of memory"),
    (_with("--device-memory-limit", "8XB"), "cannot read '8XB'"),
    (_with("--device-memory-limit", "0"), "no memory at all"),
    (_with("--device-memory-limit", "0.4"), "no memory at all"),
    (RUN + ["--device-memory-limit=-1GiB"], "cannot read '-1GiB'"),
    (_with("--device-memory-limit", "nan"), "cannot read 'nan'"),
    (_with("--device-memory-limit", "1e400"), "cannot read '1e400'"),
    (_with("--device-memory-limit", "9" * 30 + "TiB"), "too large"),
    (_with("--device-memory-limit", "8" * 10_000), "cannot read"),
    (_with("--device-memory-limit", "8GiB GiB"), "cannot read"),
    (_with("-o", ""), "must end in .csv or .json"),
    (_with("-o", "x.txt"), "must end in .csv or .json"),
    (_with("-o", ".csv"), "must end in .csv or .json"),
    (_with("-o", "/"), "must end in .csv or .json"),
    (_with("-o", "/dev/null"), "must end in .csv or .json"),
    (_with("-o", "{tmp}/missing/r.csv"), "does not exist"),
    (_with("-o", "{tmp}/folder.csv"), "is a folder"),
    (_with("-o", "{tmp}/" + "a" * 300 + ".csv"), "cannot write in"),
    (_with("-o", "/proc/version.csv"), "cannot write in"),
    (["run", "-w", "divergence", "-b", "numpy", "-s", "1024", "--variants", ""], "no variant ''"),
    (["run", "-w", "divergence", "-b", "numpy", "-s", "1024", "--variants", ","], "no variant ''"),
    (["run", "-w", "divergence", "-b", "numpy", "-s", "1024", "--variants", "sorted,sorted"], "named twice"),
    (["run", "-w", "divergence", "-b", "numpy", "-s", "1024", "--variants", "bogus"], "valid: random, sorted"),
    (["run", "-w", "matmul", "-b", "numpy", "-s", "64", "--variants", "x"], "no variant 'x'"),
    (_with("--chart", "{tmp}/c.jpg"), ".png, .svg or .pdf"),
    (_with("--chart", "{tmp}/none/c.png"), "does not exist"),
    (_with("--chart", "{tmp}/c.png") + ["--size", "0x0"], "from 320 to 8192"),
    (_with("--chart", "{tmp}/c.png") + ["--baseline", "cupy"], "not among the backends"),
    (_with("--chart", "{tmp}/c.png") + ["--kind", "pie"], "invalid choice: 'pie'"),
    (["plot", "{tmp}/missing.csv", "--chart", "{tmp}/c.png"], "no such file"),
    (["plot", "{tmp}/foreign.csv", "--chart", "{tmp}/c.png"], "not a GPU Workbench results file"),
    (["plot", "{tmp}/empty.csv", "--chart", "{tmp}/c.png"], "is empty"),
    (["plot", "{tmp}/folder.csv", "--chart", "{tmp}/c.png"], "folder.csv"),
    (["plot", "{tmp}/binary.json", "--chart", "{tmp}/c.png"], "binary.json"),
    (["report", "{tmp}/foreign.csv", "--out", "{tmp}/r.html"], "not a GPU Workbench results file"),
    (["report", "{tmp}/missing.csv", "--out", "{tmp}/r.txt"], ".html or .pdf"),
    (["lesson", "no-such-lesson"], "no-such-lesson"),
    (["lesson", "small-problems", "-s", "abc"], "cannot read 'abc'"),
    (["lesson", "small-problems", "-s", ""], "no size given"),
    (["lesson", "small-problems", "-o", ".csv"], "must end in .csv or .json"),
    (["lesson", "small-problems", "-o", "{tmp}/missing/r.csv"], "does not exist"),
    (["lesson", "small-problems", "-r", "0"], "repeats must be between 1 and 100,000, not 0"),
    (["lesson", "small-problems", "--chart", "{tmp}/c.gif"], ".png, .svg or .pdf"),
]

# Plug-in files that must each be refused in one line, never reaching this process.
BAD_PLUGINS = {
    "raises_runtime.py": ("raise RuntimeError('boom at import')", "RuntimeError"),
    "raises_zero.py": ("1 / 0", "ZeroDivisionError"),
    "raises_type.py": ("len(3)", "TypeError"),
    "syntax.py": ("def broken(:\n    pass", "SyntaxError"),
    "exits_zero.py": ("import sys; sys.exit(0)", "SystemExit"),
    "exits_five.py": ("import sys; sys.exit(5)", "SystemExit"),
    "hard_exit.py": ("import os; os._exit(7)", "exit status 7"),
    "segfault.py": ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "SIGSEGV"),
    "hangs.py": ("import time\nwhile True:\n    time.sleep(0.1)", "did not finish"),
    "leaks.py": ("import numpy as np; hoard = np.ones(2**62, dtype=np.uint8)", "while loading it"),
    "declares_nothing.py": ("x = 1", "declares no workload"),
    "empty.py": ("", "declares no workload"),
    "clash.py": ("from workbench.catalog.workloads import Workload, register\n"
                 "import numpy as np\n"
                 "W = register(Workload(name='matmul', title='Mine', kind='kernels', description='d', lesson='l',\n"
                 "    size_unit='n', default_sizes=(8,), make_inputs=lambda n, dt, v, rng: (np.ones(n, dt),),\n"
                 "    reference=lambda i: i[0], flops=lambda n: n, bytes_moved=lambda n, s: n,\n"
                 "    footprint=lambda n, s: n))", "matmul"),
    "unknown_backend.py": ("from workbench.catalog.workloads import Workload, register\n"
                           "import numpy as np\n"
                           "W = register(Workload(name='mine', title='Mine', kind='kernels', description='d',\n"
                           "    lesson='l', size_unit='n', default_sizes=(8,),\n"
                           "    make_inputs=lambda n, dt, v, rng: (np.ones(n, dt),), reference=lambda i: i[0],\n"
                           "    flops=lambda n: n, bytes_moved=lambda n, s: n, footprint=lambda n, s: n))\n"
                           "W.implement('warp-drive')(lambda inputs, ctx: (lambda: inputs[0]))", "warp-drive"),
    "README.md": ("# not python", "not a Python file"),
    "binary.py": (None, "while loading it"),
}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "foreign.csv").write_text("name,score\nada,3\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "binary.json").write_bytes(os.urandom(512))
    return tmp_path


def _refused(argv, expect, tmp_path, capsys):
    before = sorted(p.name for p in tmp_path.iterdir())
    rc = cli.main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2, (out, err)
    assert out == "", out                      # refused before any point ran or any chart was drawn
    assert len(lines) == 1 and lines[0].startswith("gpu-workbench: error:"), err
    assert expect in lines[0], lines[0]
    assert len(lines[0]) < 400                 # one readable line, even for a 10,000-character input
    assert sorted(p.name for p in tmp_path.iterdir()) == before      # nothing written
    return lines[0]


@pytest.mark.parametrize("sizes,expect", BAD_SIZES, ids=[repr(s)[:30] for s, _ in BAD_SIZES])
def test_bad_sizes_on_the_command_line(sizes, expect, files, capsys):
    _refused(_with("-s", sizes), expect, files, capsys)


@pytest.mark.parametrize("argv,expect", BAD_OPTIONS, ids=[" ".join(a)[:60] for a, _ in BAD_OPTIONS])
def test_bad_options_on_the_command_line(argv, expect, files, capsys):
    _refused(argv, expect, files, capsys)


# Values `run` refuses past the parser: `lesson` must refuse them too, with the same line (it took
# --sizes 2^40 as "left out", measured nothing and said 0), before it prints or starts anything.
LESSON_AS_RUN = [("-s", "2^40"), ("-s", "64,2^40"), ("--budget", "-1"), ("--budget", "nan"), ("--budget", "1e9"),
                 ("--min-time", "-1"), ("--min-time", "1e9"), ("-r", "0"), ("-r", "100000000"),
                 ("--point-timeout", "0"), ("--point-timeout", "inf"), ("--point-timeout", "nan")]


@pytest.mark.parametrize("option,value", LESSON_AS_RUN, ids=[" ".join(c) for c in LESSON_AS_RUN])
def test_a_lesson_refuses_what_run_refuses_with_the_same_line(option, value, files, capsys):
    said = {argv[0]: _refused([*argv, option, value, "-o", "{tmp}/r.csv"], "", files, capsys).split(";")[0]
            for argv in (["run", "-w", "source_terms", "-b", "numpy", "-s", "64"], ["lesson", "small-problems"])}
    assert said["run"] == said["lesson"]      # to the memory free now, which moves between the two


@pytest.mark.parametrize("name", sorted(BAD_PLUGINS))
def test_bad_plugins_are_refused_and_never_loaded_here(name, files, capsys, monkeypatch):
    body, expect = BAD_PLUGINS[name]
    path = files / "plugins" / name
    path.parent.mkdir()
    if body is None:
        path.write_bytes(b"\x00\xff\xfe" + os.urandom(256))
    else:
        path.write_text(textwrap.dedent(body) + "\n")
    monkeypatch.setattr(plugins, "VET_TIMEOUT_S", 5.0)       # the hanging one: five seconds, not sixty
    names = REGISTRY.names()
    _refused(["--plugin", str(path), "list"], expect, files, capsys)
    assert REGISTRY.names() == names                          # nothing of it registered here
    assert REGISTRY.get("matmul").title != "Mine"


MINE = ("from workbench.catalog.workloads import Workload, register\n"
        "import numpy as np\n"
        "W = register(Workload(name='mine', title={title!r}, kind='kernels', description='d', lesson='l',\n"
        "    size_unit='n', default_sizes=(8,), make_inputs=lambda n, dt, v, rng: (np.ones(n, dt),),\n"
        "    reference=lambda i: i[0], flops=lambda n: n, bytes_moved=lambda n, s: n,\n"
        "    footprint=lambda n, s: n))\n"
        "W.implement('numpy')(lambda inputs, ctx: (lambda: inputs[0] * 1))\n")


@pytest.mark.parametrize("then", [["run", "-w", "mine", "-b", "numpy", "-s", "8"], ["list"], []],
                         ids=["run", "list", "window"])
def test_a_second_plugin_declaring_a_taken_name_is_refused(then, files, capsys, monkeypatch, registry):
    """Two plug-ins, one name: the second replaced the first without a word and was measured. It is
    refused as a clash with a built-in is, before any work, and the first stays (the window too:
    no command opens it, and it must not open)."""
    first, second = files / "a" / "mine.py", files / "b" / "mine.py"     # one stem, two folders
    for path, title in ((first, "First"), (second, "Second")):
        path.parent.mkdir()
        path.write_text(MINE.format(title=title))
    monkeypatch.setattr(cli, "open_window", lambda **kw: pytest.fail("the window opened"))
    _refused(["--plugin", str(first), "--plugin", str(second), *then],
             f"'mine' is declared by {first.resolve()} already", files, capsys)
    assert REGISTRY.get("mine").title == "First"


def test_two_plugins_of_one_file_name_in_two_folders_are_two_modules(files, registry):
    """a/mine.py and b/mine.py shared one module name: the second replaced the first in sys.modules,
    and stayed there when it was refused."""
    import sys
    first, second = files / "a" / "mine.py", files / "b" / "mine.py"
    for path, title in ((first, "First"), (second, "Second")):
        path.parent.mkdir()
        path.write_text(MINE.format(title=title).replace("name='mine'", f"name='mine-{title}'"))
    before = set(sys.modules)
    assert registry.load_file(first, exclusive=True) == ["mine-First"]
    assert registry.load_file(second, exclusive=True) == ["mine-Second"]
    titles = sorted(getattr(sys.modules[m], "W").title for m in set(sys.modules) - before
                    if m.startswith("gpu_workbench_external_"))
    assert titles == ["First", "Second"]
    clash = files / "c" / "mine.py"
    clash.parent.mkdir()
    clash.write_text(MINE.format(title="Third").replace("name='mine'", "name='mine-First'"))
    from workbench.catalog.workloads import PluginError
    with pytest.raises(PluginError):
        registry.load_file(clash, exclusive=True)
    assert len([m for m in set(sys.modules) - before if m.startswith("gpu_workbench_external_")]) == 2


def test_the_same_plugin_named_twice_is_one_plugin(files, capsys, registry):
    path = files / "mine.py"
    path.write_text(MINE.format(title="Mine"))
    assert cli.main(["--plugin", str(path), "--plugin", str(path), "list"]) == 0
    assert "mine" in capsys.readouterr().out


def test_two_entry_points_declaring_one_name_keep_the_first(monkeypatch, registry, tmp_path):
    """Two installed packages declaring one workload name: the second replaced the first without a
    word. It is refused, said in the load errors (``gpu-workbench info`` shows them), and the first stays."""
    import importlib.metadata
    for module, title in (("ep_first", "First"), ("ep_second", "Second")):
        (tmp_path / f"{module}.py").write_text(
            "from helpers import synthetic\nfrom workbench.catalog.workloads import register\n"
            f"register(synthetic('twice', title={title!r}))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [importlib.metadata.EntryPoint(m, m, "gpu_workbench.workloads") for m in ("ep_first", "ep_second")]
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None: eps if group == "gpu_workbench.workloads" else [])
    monkeypatch.setattr(registry, "load_errors", [])
    registry.reload_entry_points()
    assert registry.get("twice").title == "First"
    assert registry.load_errors == ["entry point ep_second: a workload named 'twice' is declared by "
                                    "entry point ep_first already; give yours another name"]


def test_the_corpus_is_at_least_a_hundred_cases():
    assert len(BAD_SIZES) + len(BAD_OPTIONS) + len(BAD_PLUGINS) >= 100


# The window: the same hostile texts typed into the size fields ------------------------------------

WINDOW_TEXTS = sorted({s for s, _ in BAD_SIZES} | {"2^10", "1e3", "10,000", "١٢", "１２", " 64 ", "2 ^ 10"})


def test_every_hostile_size_text_in_the_window_is_answered_next_to_its_field(qtbot, tmp_path):
    """Each text is either refused (Run disabled, the reason beside the field, no stale preview) or
    read as the sizes the preview shows; a good value afterwards makes Run usable again."""
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QPushButton

    from panels.window import MainWindow
    from workbench.core.sizes import fmt_size
    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.ready, timeout=120_000):
        pass
    e, run = w.experiment, w.findChild(QPushButton, "runButton")
    e.select_workload("source_terms")
    e.set_checked_backends(["numpy"])
    refused = 0
    for field, other in ((e.sizeFrom, e.sizeTo), (e.sizeTo, e.sizeFrom)):
        other.setText("2^12" if field is e.sizeFrom else "16")
        for text in WINDOW_TEXTS:
            field.setText(text)
            if run.isEnabled():
                assert not e.sizeError.isVisibleTo(w) and e.sizePreview.text().startswith("Sizes: ")
                assert e.sizePreview.text() == "Sizes: " + ", ".join(fmt_size(s) for s in e.sizes())
                assert all(s >= 1 for s in e.sizes())
            else:
                refused += 1
                message = e.sizeError.text()
                assert message and "\n" not in message and len(message) < 300, (text, message)
                assert e.sizeError.isVisibleTo(w) and e.sizePreview.text() == ""
                w.run()                                   # Ctrl+R is refused too
                assert not w.controller.running
            field.setText("2^12" if field is e.sizeTo else "16")
            assert run.isEnabled(), (text, e.problem)     # nothing stale once the value is good
    assert refused >= len(BAD_SIZES)
    for steps in (1, 60):                                 # the spin box's own ends
        e.sizeSteps.setValue(steps)
        assert run.isEnabled() and 1 <= len(e.sizes()) <= steps
    w.close()

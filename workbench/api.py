"""The public surface: what a plug-in, a script or a notebook imports (docs/API.md).

Names here never move without the old one still working, with a DeprecationWarning, for a release.
Importing this module is cheap: a sweep, a chart and a comparison import what they need when called.
"""
from __future__ import annotations

import logging
import multiprocessing
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from workbench.catalog import dropin
from workbench.catalog.backends import Backend
from workbench.catalog.backends import base_name as _base_name
from workbench.catalog.backends import declare as backend
from workbench.catalog.workloads import REGISTRY, Context, Phases, PluginError, Workload, register

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from workbench.measure.engine import SweepSpec
    from workbench.measure.runner import Runner

__all__ = ["Backend", "Context", "Phases", "PluginError", "Workload", "backend", "compare", "plot", "register",
           "sweep", "timeline_trace", "try_on_gpu"]

log = logging.getLogger(__name__)
#: Held while a sweep registers and plans its workload.
_registering = threading.Lock()


def sweep(workload: str | Workload | None = None, *, setup: Callable[[int], Any] | None = None,
          kernels: Mapping[str, Callable[[Any], Any]] | None = None, backends: Iterable[str] | None = None,
          sizes: str | Iterable[int] | None = None, dtype: str = "float32", noise: float | None = None,
          budget: float | None = None, repeats: int | None = None, plugin: str | Path | None = None,
          point_timeout: float | None = None, progress: bool = True, drop_in: bool = False) -> "pd.DataFrame":
    """Measure ``workload`` (a registered name, or the workload ``plugin``, a file, declares), or
    plain callables (``setup(n)`` makes the inputs, ``kernels`` maps a backend name to ``f(inputs)``;
    ``workload`` then names them), in the supervised engine process the command line uses.

    Returns the rows ``--out`` writes, one per point, the environment and settings in ``.attrs``.
    A kernel that raises or crashes is an error row; Ctrl-C returns the points measured so far.
    ``sizes``: an expression (``"2^10:2^16:x4"``) or sizes; ``noise``: the target, a fraction.
    ``drop_in``: the NumPy kernel, unchanged, on every drop-in that can run here too (Numba's
    ``njit``, CuPy through NumPy's dispatch); each that cannot is said in one line."""
    from workbench.measure.supervisor import DEFAULT_POINT_TIMEOUT_S, Supervisor
    from workbench.workspace import arguments, plan

    # multiprocessing's own test of a spawned child still importing the parent's script
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError("workbench.sweep was called again as the engine process imported your script: "
                           "put the sweep under  if __name__ == \"__main__\":  (docs/API.md)")

    with tempfile.TemporaryDirectory(prefix="workbench-sweep-") as folder:
        with _registering:          # sweeps from several threads share the registry
            name, files = _registered(workload, setup, kernels, plugin, Path(folder), drop_in)
            if kernels is not None and backends is None:
                backends = _runnable([*kernels, *(dropin.NAMES if drop_in else ())])
            elif drop_in and not set(backends) & set(dropin.NAMES):
                # backends=["numpy"] with drop_in=True: those, and the drop-ins (naming one picks it)
                backends = [*backends, *_runnable(dropin.NAMES, must=False)]
            spec = plan(arguments.experiment(name, backends, sizes, dtype, noise, budget, repeats))
        runner = Supervisor(plugins=tuple(files),
                            point_timeout_s=arguments.timeout(point_timeout, DEFAULT_POINT_TIMEOUT_S))
        return _measure(spec, runner, progress)


def try_on_gpu(f: Callable[[Any], Any], *, setup: Callable[[int], Any], sizes: str | Iterable[int] | None = None,
               dtype: str = "float32", name: str | None = None, **options: Any) -> "pd.DataFrame":
    """Will ``f`` get faster, and with which library? ``f``, your NumPy function of ``setup(n)``'s
    inputs, unchanged, measured as NumPy and on every drop-in that can run here (:func:`sweep`
    with ``drop_in=True``; ``options`` are sweep's)."""
    return sweep(name or getattr(f, "__name__", None) or "f", setup=setup, kernels={"numpy": f}, sizes=sizes,
                 dtype=dtype, drop_in=True, **options)


def _registered(workload: Any, setup: Callable | None, kernels: Mapping | None, plugin: str | Path | None,
                folder: Path, drop_in: bool = False) -> tuple[str, list[str]]:
    """The workload's name, registered here, and the files the engine process loads to know it."""
    from workbench.measure import plugins
    files: list[str] = []
    if drop_in and kernels is None:
        raise ValueError("drop_in=True runs your own function: give it as kernels={'numpy': f}, with setup=")
    if kernels is not None:
        files.append(_callables_plugin(workload, setup, kernels, folder, drop_in))
    elif plugin is not None:
        files.append(str(Path(plugin).resolve()))
    for path in files:              # vetted first: the user's code runs here only once it loaded cleanly
        names = plugins.load(path, exclusive=False)
        workload = _named_in(workload, names, path if kernels is None else None)
    name = workload.name if isinstance(workload, Workload) else workload
    if name is None:
        raise ValueError("name a workload, or give setup= and kernels=")
    if not REGISTRY.builtin(name) and name not in REGISTRY.names():
        raise ValueError(f"no workload named {name!r}: name a built-in one ({', '.join(REGISTRY.names())}), "
                         "or give its file as plugin=, or its functions as setup= and kernels=")
    origin = REGISTRY.origin(name)
    gone = not origin or (origin.endswith(".py") and not Path(origin).is_file())    # entry points reload
    if not files and not REGISTRY.builtin(name) and gone:
        raise ValueError(f"workload {name!r} was registered in this process only ({origin or 'no file'}), "
                         "which the engine process cannot see: give its file as plugin=, or its functions "
                         "as setup= and kernels= again")
    return name, files + ([origin] if origin.endswith(".py") and origin not in files else [])


def _runnable(kernels: Iterable[str], must: bool = True) -> list[str]:
    """The callables' backends that can run here; each that cannot is said, not dropped unseen
    (``must``: none at all is an error)."""
    from workbench.catalog.backends import probe
    found = {name: probe(name) for name in kernels}
    for name, a in found.items():
        if not a.usable:
            log.warning("%s not measured: not usable here: %s", name, a.reason)
    usable = [name for name, a in found.items() if a.usable]
    if not usable and must:
        raise ValueError("none of the kernels can run here: "
                         + "; ".join(f"{n}: {a.reason}" for n, a in found.items()))
    return usable


def _named_in(workload: Any, names: list[str], path: str | None) -> Any:
    """The workload a loaded file declares that the caller named, else its only one (``path``:
    the user's file; None for callables, whose file declares the one name given)."""
    if isinstance(workload, Workload) or workload in names:
        return workload
    if path is None or (workload is None and len(names) == 1):
        return names[0]
    raise ValueError(f"{path} declares {', '.join(names)}: name one of them"
                     + (f", not {workload!r}" if workload is not None else ""))


def _callables_plugin(name: Any, setup: Callable | None, kernels: Mapping[str, Callable], folder: Path,
                      drop_in: bool = False) -> str:
    from workbench.catalog import shipped
    if kernels is not None and not isinstance(kernels, Mapping):
        raise ValueError(f"kernels= maps a backend's name to a function of the inputs: give a dict, "
                         f"not a {type(kernels).__name__}")
    if setup is None or not kernels or not callable(setup):
        raise ValueError("plain callables need both setup= (n -> inputs) and kernels= ({backend: f(inputs)})")
    wrong = [name for name, f in kernels.items() if not isinstance(name, str) or not callable(f)]
    if wrong:
        raise ValueError(f"kernels= maps a backend's name to a function of the inputs: not {wrong[0]!r}")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name the callables' workload with a text, not {name!r}")
    name = "kernels" if name is None else name
    if REGISTRY.builtin(name):
        raise ValueError(f"{name!r} is a built-in workload; name your callables otherwise")
    return str(shipped.ship(name, setup, kernels, folder, drop_in))


def _measure(spec: "SweepSpec", runner: "Runner", progress: bool) -> "pd.DataFrame":
    """Drive a workspace through ``runner`` as the command line does; Ctrl-C keeps what was measured."""
    import pandas  # noqa: F401 - imported before the sweep, not in the frame's making after it

    from workbench.measure.environment import record
    from workbench.workspace import Workspace
    ws = Workspace(environment=record())
    bar = _Bar(ws, progress)
    ws.run(spec)
    if threading.current_thread() is not threading.main_thread():     # no signal handler there
        try:
            ws.drive(runner)
        except KeyboardInterrupt:
            runner.stop()
        finally:
            runner.close()
            bar.ended(None)
        return _frame(ws)
    # A notebook's interrupt is a SIGINT: the first stops the sweep (the point in flight is kept if
    # it has its samples), a second ends the engine at once; neither raises while the points measured
    # are gathered, so an impatient second one cannot throw them away.
    from workbench.workspace.signals import StopOnSignals
    try:
        with StopOnSignals(runner, ("SIGINT",)) as signals:
            try:
                ws.drive(runner)
            finally:
                runner.close()
                bar.ended(None)
        if signals.received:
            log.warning("sweep stopped by Ctrl-C: %d point(s) measured", len(ws.rows))
        return _frame(ws)
    finally:
        StopOnSignals.restore()


def _frame(ws: Any) -> "pd.DataFrame":
    troubles = list(ws.troubles)
    if troubles and not ws.rows and not ws.cancelled:
        raise RuntimeError("the sweep measured nothing: " + "; ".join(troubles))
    for trouble in troubles:        # said, and kept with the rows: never an empty frame without a word
        log.warning("%s", trouble)
    frame = ws.table.frame()
    frame.attrs.update(environment=dict(ws.environment), settings=dict(ws.settings), troubles=troubles)
    if not frame.empty and frame["backend"].map(lambda b: _base_name(str(b)) in dropin.NAMES).any():
        from workbench.views.summary import answers
        said = answers(frame)          # each drop-in's answer in one sentence, on each of its rows
        frame["answer"] = frame["backend"].map(lambda b: said.get(b, ""))
    return frame


class _Bar:
    """tqdm's bar (its notebook bar in Jupyter), one step per point, where ``shown``; the engine's
    warnings above it, or through logging without it."""

    def __init__(self, ws: Any, shown: bool) -> None:
        from workbench.measure import protocol
        from workbench.workspace import events as ev
        self.bar = None
        self.shown = shown
        handlers = {ev.SweepPlanned: self.planned, ev.PointAdded: self.added, ev.SweepEnded: self.ended,
                    protocol.LogLine: self.said}
        ws.listen(lambda event: protocol.dispatch(handlers, event))

    def planned(self, e: Any) -> None:
        if self.shown:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=e.total, unit="pt", leave=False)

    def said(self, m: Any) -> None:
        if m.level not in ("WARNING", "ERROR", "CRITICAL"):
            return
        if self.bar is None:
            log.warning("%s", m.text)
        else:
            self.bar.write(f"gpu-workbench: {m.text}")

    def added(self, e: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def ended(self, e: Any) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _result_set(frame: "pd.DataFrame"):
    from workbench.results.files import live
    return live(frame, frame.attrs.get("environment", {}), frame.attrs.get("settings", {}))


def plot(df: "pd.DataFrame", kind: str = "runtime", *, baseline: str | None = None,
         point: tuple | None = None) -> "Figure":
    """One chart of a sweep's rows as a matplotlib Figure (shown inline in Jupyter): the chart spec
    the window and ``--chart`` draw. ``kind``: one of ``workbench.views.presets.KINDS`` (runtime,
    speedup, transfer, memory, first-call, roofline, energy, timeline), as ``plot --kind`` takes
    them. ``point``: the timeline's (backend, size) or (backend, size, variant); None, the largest
    size's GPU point with the most records."""
    import pandas as pd

    from workbench.results import rows
    from workbench.views import matplotlib_charts as charts
    from workbench.views import presets
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"plot takes the DataFrame sweep() returned, not a {type(df).__name__}")
    if len(df.columns) and "status" not in df.columns:
        raise ValueError("plot takes a sweep's rows (what sweep() returns); this frame has no status column")
    if not len(df.columns):         # nothing swept: the chart says so, as for a sweep of errors only
        df = pd.DataFrame(columns=list(rows.COLUMNS))
    preset = presets.preset("slide", (1280, 720))
    with charts.style(preset):
        return charts.figure(kind, [_result_set(df)], preset, stamp=False, baseline_name=baseline,
                             point=None if point is None else tuple(point))


def timeline_trace(df: "pd.DataFrame", path: str, point: tuple | None = None) -> str:
    """Write the timeline of one point of a sweep's rows as a Chrome trace (JSON) that Perfetto and
    chrome://tracing open; ``point`` as for :func:`plot`. Returns the path written."""
    import pandas as pd

    from workbench.views import matplotlib_charts as charts
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"timeline_trace takes the DataFrame sweep() returned, not a {type(df).__name__}")
    return str(charts.export([_result_set(df)], path, "timeline", point=None if point is None else tuple(point))[0])


def compare(base: "pd.DataFrame", new: "pd.DataFrame", *, figure: str = "end-to-end",
            min_effect: float | None = None) -> "pd.DataFrame":
    """Each point measured ok in both: the medians, the ratio new/base with its interval and the
    verdict (faster, slower, same, undecided), as the ``compare`` command decides it."""
    import pandas as pd

    from workbench.core import stats, verdicts
    columns = {"end-to-end": "total_median_s", "compute": "compute_median_s"}
    if not isinstance(figure, str) or figure not in columns:
        raise ValueError(f"figure={figure!r}: compare the end-to-end or the compute time")
    effect = stats.DEFAULT_MIN_EFFECT if min_effect is None else min_effect
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not 0 <= effect < 1:
        raise ValueError(f"min_effect={min_effect!r}: a fraction from 0 to below 1 (0.05 for 5 %)")
    for name, frame in (("base", base), ("new", new)):
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"{name} is a {type(frame).__name__}: give the DataFrame sweep() returned")
        missing = [c for c in ("status", columns[figure], *verdicts.KEYS) if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} is not a sweep's rows (no {', '.join(missing)}): give what sweep() returned")
    found = verdicts.compare_sets(base, new, columns[figure], effect)
    names = [c for c in verdicts.COMPARED if c != "described"]
    # The same columns with no point in common: a frame the caller can index all the same.
    return pd.DataFrame([{k: v for k, v in r.items() if k != "described"} for r in found], columns=names)

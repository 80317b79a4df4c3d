"""The public surface: what a plug-in, a script or a notebook imports (docs/API.md).

Names here never move without the old one still working, with a DeprecationWarning, for a release.
Importing this module is cheap: a sweep, a chart and a comparison import what they need when called.
"""
from __future__ import annotations

import logging
import multiprocessing
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from workbench.catalog.backends import Backend
from workbench.catalog.backends import declare as backend
from workbench.catalog.workloads import REGISTRY, Context, Phases, PluginError, Workload, register

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from workbench.measure.engine import SweepSpec
    from workbench.measure.runner import Runner

__all__ = ["Backend", "Context", "Phases", "PluginError", "Workload", "backend", "compare", "plot", "register",
           "sweep"]

log = logging.getLogger(__name__)


def sweep(workload: str | Workload | None = None, *, setup: Callable[[int], Any] | None = None,
          kernels: Mapping[str, Callable[[Any], Any]] | None = None, backends: Iterable[str] | None = None,
          sizes: str | Iterable[int] | None = None, dtype: str = "float32", noise: float | None = None,
          budget: float | None = None, repeats: int | None = None, plugin: str | Path | None = None,
          point_timeout: float | None = None, progress: bool = True) -> "pd.DataFrame":
    """Measure ``workload`` (a registered name, or the workload ``plugin``, a file, declares), or
    plain callables (``setup(n)`` makes the inputs, ``kernels`` maps a backend name to ``f(inputs)``;
    ``workload`` then names them), in the supervised engine process the command line uses.

    Returns the rows ``--out`` writes, one per point, the environment and settings in ``.attrs``.
    A kernel that raises or crashes is an error row; Ctrl-C returns the points measured so far.
    ``sizes``: an expression (``"2^10:2^16:x4"``) or sizes; ``noise``: the target, a fraction."""
    from workbench.measure import plugins
    from workbench.measure.supervisor import DEFAULT_POINT_TIMEOUT_S, Supervisor
    from workbench.workspace import Experiment, plan

    # multiprocessing's own test of a spawned child still importing the parent's script
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError("workbench.sweep was called again as the engine process imported your script: "
                           "put the sweep under  if __name__ == \"__main__\":  (docs/API.md)")

    files: list[str] = []
    with tempfile.TemporaryDirectory(prefix="workbench-sweep-") as folder:
        if kernels is not None:
            files.append(_callables_plugin(workload, setup, kernels, Path(folder)))
        elif plugin is not None:
            plugins.vet(plugin)
            files.append(str(Path(plugin).resolve()))
        for path in files:
            names = REGISTRY.load_file(path)
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
        files += [origin] if origin.endswith(".py") and origin not in files else []
        if sizes is not None and not isinstance(sizes, str):
            sizes = ",".join(str(int(n)) for n in sizes)
        spec = plan(Experiment(workload=name, backends=tuple(backends) if backends is not None else None,
                               sizes=sizes, dtype=dtype, noise=noise, budget_s=budget, repeats=repeats))
        runner = Supervisor(plugins=tuple(files), point_timeout_s=point_timeout or DEFAULT_POINT_TIMEOUT_S)
        return _measure(spec, runner, progress)


def _named_in(workload: Any, names: list[str], path: str | None) -> Any:
    """The workload a loaded file declares that the caller named, else its only one (``path``:
    the user's file; None for callables, whose file declares the one name given)."""
    if isinstance(workload, Workload) or workload in names:
        return workload
    if path is None or (workload is None and len(names) == 1):
        return names[0]
    raise ValueError(f"{path} declares {', '.join(names)}: name one of them"
                     + (f", not {workload!r}" if workload is not None else ""))


def _callables_plugin(name: Any, setup: Callable | None, kernels: Mapping[str, Callable], folder: Path) -> str:
    from workbench.catalog import shipped
    if setup is None or not kernels:
        raise ValueError("plain callables need both setup= (n -> inputs) and kernels= ({backend: f(inputs)})")
    name = name if isinstance(name, str) else "kernels"
    if REGISTRY.builtin(name):
        raise ValueError(f"{name!r} is a built-in workload; name your callables otherwise")
    return str(shipped.ship(name, setup, kernels, folder))


def _measure(spec: "SweepSpec", runner: "Runner", progress: bool) -> "pd.DataFrame":
    """Drive a workspace through ``runner`` as the command line does; Ctrl-C keeps what was measured."""
    from workbench.measure.environment import record
    from workbench.workspace import Workspace
    ws = Workspace(environment=record())
    bar = _Bar(ws) if progress else None
    ws.run(spec)
    try:
        ws.drive(runner)
    except KeyboardInterrupt:       # the point in flight is lost; those before it are in the table
        log.warning("sweep interrupted: %d point(s) measured", len(ws.rows))
        runner.stop()
    finally:
        runner.close()
        if bar is not None:
            bar.ended(None)
    frame = ws.table.frame()
    frame.attrs.update(environment=dict(ws.environment), settings=dict(ws.settings))
    return frame


class _Bar:
    """tqdm's bar (its notebook bar in Jupyter), one step per point."""

    def __init__(self, ws: Any) -> None:
        from workbench.measure import protocol
        from workbench.workspace import events as ev
        self.bar = None
        handlers = {ev.SweepPlanned: self.planned, ev.PointAdded: self.added, ev.SweepEnded: self.ended}
        ws.listen(lambda event: protocol.dispatch(handlers, event))

    def planned(self, e: Any) -> None:
        from tqdm.auto import tqdm
        self.bar = tqdm(total=e.total, unit="pt", leave=False)

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


def plot(df: "pd.DataFrame", kind: str = "runtime", *, baseline: str | None = None) -> "Figure":
    """One chart of a sweep's rows as a matplotlib Figure (shown inline in Jupyter): the chart spec
    the window and ``--chart`` draw. ``kind``: one of ``workbench.views.presets.KINDS`` (runtime,
    speedup, transfer, memory, first-call, roofline, energy), as ``plot --kind`` takes them."""
    from workbench.views import matplotlib_charts as charts
    from workbench.views import presets
    preset = presets.preset("slide", (1280, 720))
    with charts.style(preset):
        return charts.figure(kind, [_result_set(df)], preset, stamp=False, baseline_name=baseline)


def compare(base: "pd.DataFrame", new: "pd.DataFrame", *, figure: str = "end-to-end",
            min_effect: float | None = None) -> "pd.DataFrame":
    """Each point measured ok in both: the medians, the ratio new/base with its interval and the
    verdict (faster, slower, same, undecided), as the ``compare`` command decides it."""
    import pandas as pd

    from workbench.core import stats, verdicts
    column = "total_median_s" if figure == "end-to-end" else "compute_median_s"
    found = verdicts.compare_sets(base, new, column, stats.DEFAULT_MIN_EFFECT if min_effect is None else min_effect)
    return pd.DataFrame([{k: v for k, v in r.items() if k != "described"} for r in found])

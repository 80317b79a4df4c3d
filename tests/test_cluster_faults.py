"""What a lab's cluster does to a sweep when things go wrong: a mistyped address, a port held by
something that is not a scheduler, Ctrl-C while the scheduler is being reached, a worker that
hangs. The cluster is started the way a lab starts one (``test_cluster.Lab``: a ``dask scheduler``
and ``dask worker --nthreads 1`` processes), shared by the tests of this module.
"""
from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the cluster extra is not installed (pip install -e '.[cluster]')")

from test_cluster import PLUGIN, ROOT, lab, spec_of  # noqa: E402,F401 - lab: the fixture

from workbench.cluster.connect import Target  # noqa: E402
from workbench.measure import protocol  # noqa: E402

RUN = ["run", "-w", "source_terms", "-b", "numpy", "-s", "1024", "--budget", "0.01", "-q"]


def cli(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                         timeout=timeout, cwd=str(ROOT))
    return out, time.monotonic() - t0


def one_line(out: subprocess.CompletedProcess) -> str:
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


class Squatter:
    """A port held by something that is not a Dask scheduler: ``web`` answers as a web server
    (the dashboard's port given by mistake), ``silent`` takes connections and never says a word
    (a tunnel whose far end is down). ``accepted`` counts the connections it took."""

    def __init__(self, kind: str) -> None:
        self.accepted = 0
        squatter = self
        if kind == "web":
            class Server(http.server.ThreadingHTTPServer):
                daemon_threads = True

                def process_request(self, request, client_address):
                    squatter.accepted += 1
                    super().process_request(request, client_address)
            self.server = Server(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
            self.port = self.server.server_address[1]
            self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
            self.close = self._close_web
        else:
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", 0))
            self.sock.listen(16)
            self.port = self.sock.getsockname()[1]
            self.held: list[socket.socket] = []
            self.thread = threading.Thread(target=self._take, daemon=True)
            self.close = self._close_silent
        self.thread.start()

    def _take(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:           # closed: the test is over
                return
            self.held.append(conn)
            self.accepted += 1

    def _close_web(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _close_silent(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture(params=["web", "silent"])
def squatter(request):
    s = Squatter(request.param)
    yield s
    s.close()


# Addresses ------------------------------------------------------------------------------------

@pytest.mark.parametrize("address, why", [
    ("tcp://", "no port"), ("tcp://:8786", "no host"), ("tcp://127.0.0.1:abc", "port must be a number"),
    ("tcp://127.0.0.1:99999", "port must be a number"), ("inproc://x", "not a scheme"),
    ("http://127.0.0.1:8787/status", "dashboard"), ("::1:8786", "in brackets"), ("127.0.0.1", "no port"),
])
def test_an_address_that_names_no_scheduler_is_refused_before_any_connection(address, why):
    with pytest.raises(ValueError, match="not a scheduler address") as refused:
        Target(address).check()
    assert why in str(refused.value)


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "tls://lab:8786", "[::1]:8786", "tcp://[::1]:8786",
                                     "lab.example.org:8786", "local"])
def test_the_addresses_a_lab_writes_are_taken(address):
    Target(address).check()


def test_a_malformed_address_is_one_line_before_any_connection_is_tried():
    """Dask took 'tcp://127.0.0.1:abc' as far as its connection attempt: one line, then a traceback
    of its own seconds later as the half-made client was collected."""
    out, took = cli(*RUN, "--cluster", "tcp://127.0.0.1:abc", "--cluster-timeout", "5")
    assert out.returncode == 2 and "the port must be a number" in one_line(out)
    assert took < 5, took          # refused before the 5 s given to reach a scheduler


# A port that answers, but not as a scheduler ---------------------------------------------------

def test_a_port_held_by_something_else_is_one_line_within_the_time_given(squatter):
    """Dask's client waits for a scheduler's handshake with no limit: a web server or a silent
    tunnel on the port kept the command waiting for ever, --cluster-timeout notwithstanding."""
    out, took = cli(*RUN, "--cluster", f"tcp://127.0.0.1:{squatter.port}", "--cluster-timeout", "2", timeout=40)
    assert out.returncode == 2 and out.stdout == ""
    assert "did not answer as a Dask scheduler in 2 s" in one_line(out)
    assert squatter.accepted >= 1 and took < 15, took


class Echo:
    """A port that answers with what it is sent: Dask's handshake passes, nothing else does."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._take, daemon=True).start()

    def _take(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)


def test_a_port_that_echoes_is_one_line_then_silence():
    """The handshake came back and Dask's client failed after it: one line, then 6 s later a
    Client.__del__ traceback as the half-made client was collected at exit."""
    echo = Echo()
    try:
        out, took = cli(*RUN, "--cluster", f"tcp://127.0.0.1:{echo.port}", "--cluster-timeout", "5")
    finally:
        echo.sock.close()
    assert out.returncode == 2 and out.stdout == ""
    assert "answered, but not as a Dask scheduler" in one_line(out)      # one line: nothing at exit either
    assert took < 5, took


def test_a_workers_address_given_as_the_schedulers_is_named_as_such(lab):
    from distributed import Client
    with Client(lab.address, timeout=10, set_as_default=False) as client:
        worker = next(iter(client.scheduler_info()["workers"]))
    out, took = cli(*RUN, "--cluster", worker, "--cluster-timeout", "5")
    assert out.returncode == 2 and out.stdout == ""
    line = one_line(out)
    assert f"{worker} is a Dask worker, not a scheduler: give the scheduler's address ({lab.address})" in line
    assert took < 5, took


def test_ctrl_c_while_the_scheduler_is_being_reached_ends_the_command_at_once():
    squatter = Squatter("silent")
    try:
        proc = subprocess.Popen([sys.executable, "-m", "workbench", *RUN, "--cluster",
                                 f"tcp://127.0.0.1:{squatter.port}", "--cluster-timeout", "60"],
                                cwd=str(ROOT), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _until(lambda: squatter.accepted >= 1 or proc.poll() is not None, 30, "a connection to the port")
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        squatter.close()
    assert proc.returncode == 130, stderr
    assert took < 5, took
    assert "interrupted by SIGINT: 0 point(s) measured" in stderr


# A worker that hangs ----------------------------------------------------------------------------

def _worker_pids(lab) -> dict[str, int]:
    from distributed import Client
    with Client(lab.address, timeout=10, set_as_default=False) as client:
        return client.run(os.getpid)


def test_a_hung_worker_is_left_out_and_the_sweep_runs_on_the_others(lab, nap):
    """A worker that does not answer (stopped, hung in a C call) kept every later sweep from
    starting: Client.run waits for every worker. It is left out after its time, with its points."""
    from workbench.cluster.connect import Target
    from workbench.cluster.runner import ClusterRunner
    pids = _worker_pids(lab)
    hung, well = sorted(pids)
    os.kill(pids[hung], signal.SIGSTOP)
    r = ClusterRunner(Target(lab.address, timeout_s=10), plugins=(PLUGIN,), survey_timeout_s=2)
    try:
        msgs = list(r.run(spec_of(sizes=(1024, 2048, 4096))))
    finally:
        os.kill(pids[hung], signal.SIGCONT)
        r.close()
    rows = protocol.rows(msgs)
    assert [w.address for w in r.workers] == [well]
    assert sorted(row["size"] for row in rows) == [1024, 2048, 4096]
    assert all(row["status"] == "ok" and row["worker"] == well for row in rows), rows
    assert isinstance(msgs[-1], protocol.SweepFinished) and not msgs[-1].cancelled


def test_stop_reaches_the_point_running_on_a_worker(lab):
    """Stop sets a Dask Event that a thread of the running task watches. That thread looked the
    Event's client up where there is none (a thread of its own, not the task's): every wait raised,
    no Stop ever reached a point, and each stopped sweep waited out the client's give-up time to
    call its running points 'not measured'. Given all the time it wants here, the worker answers
    within the supervisor's grace, with no such row."""
    from workbench.cluster.runner import ClusterRunner
    from workbench.measure.engine import SweepSpec
    r = ClusterRunner(Target(lab.address, timeout_s=10), stop_wait_s=30)
    spec = SweepSpec("source_terms", ("numpy",), (2 ** 14, 2 ** 15), budget_s=20, noise=0, max_repeats=10 ** 9)
    msgs, stopped_at = [], None
    try:
        for m in r.run(spec):
            msgs.append(m)
            if isinstance(m, protocol.PointStarted) and stopped_at is None:
                stopped_at = time.monotonic()
                r.stop()
    finally:
        r.close()
    took = time.monotonic() - stopped_at
    assert isinstance(msgs[-1], protocol.SweepFinished) and msgs[-1].cancelled
    assert took < 5, took
    assert not [row for row in protocol.rows(msgs) if "did not answer in time" in row["message"]]


def test_a_worker_that_hangs_mid_point_is_restarted_and_the_sweep_goes_on(lab, nap):
    """A worker stopped while it measures holds its host's lock: its point never ends (the engine's
    time limit is the worker's to enforce) and every other point of the host waits, until the
    scheduler gives the worker up minutes later (8 minutes, seen). Past the longest a point can
    last, the point is an error row and the worker is restarted through its nanny."""
    from workbench.cluster.runner import ClusterRunner
    r = ClusterRunner(Target(lab.address, timeout_s=10), plugins=(PLUGIN,), point_timeout_s=2, hung_grace_s=1)
    msgs, hung = [], None
    try:
        for m in r.run(spec_of(sizes=(1024, 3, 2048, 4096))):
            msgs.append(m)
            if isinstance(m, protocol.PointStarted) and m.size == 3 and hung is None:
                from test_cluster import _wait_for_file
                pid_file = _wait_for_file(lab.pids, "*.pid")
                hung = int(pid_file.read_text())
                pid_file.unlink()
                os.kill(hung, signal.SIGSTOP)
    finally:
        r.close()
        if hung is not None:
            try:
                os.kill(hung, signal.SIGCONT)      # (its nanny has ended it: nothing to wake)
            except ProcessLookupError:
                pass
    rows = protocol.rows(msgs)
    assert hung is not None and sorted(row["size"] for row in rows) == [3, 1024, 2048, 4096]
    errors = [row for row in rows if row["status"] != "ok"]
    assert len(errors) == 1 and errors[0]["size"] == 3, [(row["size"], row["message"]) for row in rows]
    assert "longer than a point can last: it hangs" in errors[0]["message"]
    _until(lambda: not _alive(hung), 30, "end of the hung worker")     # its nanny ended it
    lab.wait_for(2)                                                       # and started another


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/status").read_text().count("State:\tZ")


@pytest.fixture
def nap(registry):
    registry.load_file(PLUGIN)
    return registry


def _until(condition, timeout: float, what: str) -> None:
    """Poll ``condition`` (a real condition, not a guess at how long something takes)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} after {timeout:g} s")
        time.sleep(0.02)


# Plug-ins on the workers ------------------------------------------------------------------------

EDITED = '''
import numpy as np
from workbench.catalog.workloads import Workload, register
W = register(Workload(
    name="edited", title="Edited", kind="kernels", description="a kernel its author changes between sweeps",
    lesson="none", size_unit="elements", default_sizes=(1024,),
    make_inputs=lambda n, dt, v, rng: (np.arange(n, dtype=dt),),
    reference=lambda inp: inp[0].astype(np.float64) * 2,
    flops=lambda n: float(n), bytes_moved=lambda n, isz: 2.0 * n * isz, footprint=lambda n, isz: 4.0 * n * isz,
))
FACTOR = {factor}

@W.implement("numpy")
def _numpy(inputs, ctx):
    (x,) = inputs
    out = np.empty_like(x)
    return lambda: np.multiply(x, FACTOR, out=out)
'''


def _edited_rows(lab, path, factor: int, **kw):
    from workbench.cluster.runner import ClusterRunner
    path.write_text(EDITED.format(factor=factor))
    r = ClusterRunner(Target(lab.address, timeout_s=10), plugins=(str(path),), **kw)
    try:
        return list(r.run(spec_of(workload="edited", sizes=(1024, 2048, 4096, 8192), budget_s=0.01, rounds=1)))
    finally:
        r.close()


def test_a_plugin_edited_between_sweeps_is_measured_as_it_is_now(lab, registry, tmp_path):
    """A worker outlives a sweep: it kept the plug-in it loaded first, and its engine too, so a
    kernel fixed (or broken) and run again was measured as it was. Here the second version is wrong
    (x*3 against a reference of x*2): its rows must say so, on every worker."""
    path = tmp_path / "edited_plugin.py"
    path.write_text(EDITED.format(factor=2))
    registry.load_file(path)
    first = protocol.rows(_edited_rows(lab, path, 2))
    assert len(first) == 4 and all(r["status"] == "ok" for r in first), [r["message"] for r in first]
    second = protocol.rows(_edited_rows(lab, path, 3))
    assert len(second) == 4 and not [r for r in second if r["status"] == "ok"], [
        (r["worker"], r["status"]) for r in second]


def test_a_plugin_no_worker_has_is_one_line(lab, registry, tmp_path):
    path = tmp_path / "gone_plugin.py"
    path.write_text(EDITED.format(factor=2))
    registry.load_file(path)          # here, as the command line loads it; then it is gone for the workers
    path.unlink()
    msgs = _edited_rows_without_writing(lab, path)
    errors = [m for m in msgs if isinstance(m, protocol.SweepError)]
    assert len(errors) == 1 and "is not on this worker" in errors[0].message, errors
    assert not protocol.rows(msgs)


def test_a_worker_whose_copy_of_a_plugin_differs_measures_none_of_its_points(lab, registry, tmp_path, monkeypatch):
    """Another copy of the file on a worker's host, not the one the sweep was started with: that
    worker would measure other code than asked."""
    from workbench.cluster.runner import ClusterRunner
    path = tmp_path / "copied_plugin.py"
    path.write_text(EDITED.format(factor=2))
    registry.load_file(path)
    monkeypatch.setattr(ClusterRunner, "_digests", lambda self: {str(path): "0" * 64})
    msgs = _edited_rows_without_writing(lab, path)
    errors = [m for m in msgs if isinstance(m, protocol.SweepError)]
    assert len(errors) == 1 and "their contents differ" in errors[0].message, errors
    assert not protocol.rows(msgs)


def _edited_rows_without_writing(lab, path):
    from workbench.cluster.runner import ClusterRunner
    r = ClusterRunner(Target(lab.address, timeout_s=10), plugins=(str(path),))
    try:
        return list(r.run(spec_of(workload="edited", sizes=(1024,))))
    finally:
        r.close()


# --cluster local ----------------------------------------------------------------------------------

def test_two_local_clusters_at_once_start_quietly_on_this_machine_only(recwarn):
    """Each scheduler serves HTTP (health, metrics) too: on port 8787 by default, so a second
    'run --cluster local' (or a lab's scheduler on this host) printed Dask's 'Port 8787 is already
    in use' warning into the command's output. Each takes a free port of 127.0.0.1 now."""
    from workbench.cluster.connect import start_local
    clusters = []
    try:
        for _ in range(2):
            clusters.append(start_local())
        for c in clusters:
            assert c.scheduler_address.startswith("tcp://127.0.0.1:")
            http = [s.getsockname() for s in c.scheduler.http_server._sockets.values()]
            assert http and all(host == "127.0.0.1" and port != 8787 for host, port, *_ in http), http
    finally:
        for c in clusters:
            c.close()
    assert not [w for w in recwarn if "already in use" in str(w.message)], [str(w.message) for w in recwarn]


def test_a_local_cluster_leaves_this_process_environment_as_it_found_it():
    """Dask's nanny wrote MALLOC_TRIM_THRESHOLD_ and one OpenMP, MKL and OpenBLAS thread into the
    process that started it, and left them: every local engine started afterwards inherited them."""
    import os
    from workbench.cluster.connect import start_local
    before = dict(os.environ)
    cluster = start_local()
    try:
        assert dict(os.environ) == before, sorted(set(os.environ.items()) ^ set(before.items()))
    finally:
        cluster.close()


# The window ---------------------------------------------------------------------------------------

def test_the_window_stops_at_once_while_it_waits_for_a_scheduler_that_does_not_answer(qtbot, tmp_path):
    """'Run on' an address where nothing answers as a scheduler: the question of which backends the
    workers have waits; Run queues behind it. Stop then ends both at once (it waited for the whole
    time given to reach the scheduler, and for ever before that had an end), and going back to
    'This machine' runs there without waiting on the cluster."""
    from PySide6.QtCore import QSettings

    from panels.window import MainWindow
    from test_gui import check_backends, set_sizes
    squatter = Squatter("silent")
    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    try:
        with qtbot.waitSignal(w.ready, timeout=120_000):
            w.show()
        w.runOn.choice.setCurrentText("Dask scheduler at...")
        w.runOn.address.setText(f"tcp://127.0.0.1:{squatter.port}")
        w.runOn.address.editingFinished.emit()
        assert w.experiment.select_workload("source_terms")
        check_backends(w, ["numpy"])
        set_sizes(w, "2^10", "2^12", 2)
        w.experiment.budgetSpin.setValue(0.02)
        w.run()
        qtbot.waitUntil(lambda: squatter.accepted >= 1, timeout=10_000)
        stopped = time.monotonic()
        with qtbot.waitSignal(w.sweepCompleted, timeout=30_000) as done:
            w.stop()
        assert done.args == [True] and time.monotonic() - stopped < 3
        assert not w.rows
        w.runOn.choice.setCurrentText("This machine")
        with qtbot.waitSignal(w.sweepCompleted, timeout=60_000) as done:
            w.run()
        assert done.args == [False] and len(w.rows) == 2 and all(r["status"] == "ok" for r in w.rows)
    finally:
        w.close()
        squatter.close()


def test_a_worker_with_another_gpu_workbench_is_left_out(lab, monkeypatch):
    """A worker measures with its own copy of the engine: another version there than here (one
    whose survey even takes other arguments: the TypeError a worker that had imported an older
    copy answered) is left out, with the reason, rather than handed points."""
    import workbench
    from workbench.cluster.runner import ClusterRunner
    monkeypatch.setattr(workbench, "__version__", "0.0.0-here")
    r = ClusterRunner(Target(lab.address, timeout_s=10))
    try:
        msgs = list(r.run(spec_of(workload="source_terms", sizes=(1024,))))
    finally:
        r.close()
    errors = [m for m in msgs if isinstance(m, protocol.SweepError)]
    assert len(errors) == 1 and "there, 0.0.0-here here" in errors[0].message, errors
    assert not protocol.rows(msgs)

"""The charts' specs made in a process of their own, from the rows it is sent.

Made in a thread of the window's process, the specs (pandas) held the GIL against the GUI thread
and slowed every repaint (docs/PERFORMANCE.md). The window's spec thread sends only what changed
since its last request and waits on the pipe, which holds no GIL; the process keeps each client's
rows, makes the sets from them as the workspace does (``workbench.results.sets.sets_of``), and
sends back the specs, verdicts and summary without the sets' tables (``Prepared.sent``).

One process serves every client of the window's process, started at the first request and again
where it died (the next request sends everything anew); where none can be started,
:class:`Unavailable` says so and the caller makes the specs itself.
"""
from __future__ import annotations

import dataclasses
import itertools
import logging
import multiprocessing as mp
import pickle
import threading
from functools import partial
from typing import Any, Sequence

from workbench.core import priority, spawned
from workbench.core.lazy import lazy_module

from workbench.results import pieces
from workbench.results.rows import Row
from workbench.results.sets import SetParts, sets_of
from workbench.results.table import RowTable
from workbench.views.live import Prepared, prepare

pd = lazy_module("pandas")      # imported at first use: not needed to show the window

log = logging.getLogger(__name__)

#: How long a request may wait for the process to start and answer before it counts as gone (s):
#: far beyond its first start, which imports pandas, and any answer (docs/PERFORMANCE.md).
ANSWER_S = 60.0
#: How often a waiting request looks whether its client was closed (s): a window closing while the
#: process is stopped or swamped waits no longer than this for it.
WAIT_S = 0.1


class Unavailable(RuntimeError):
    """No spec process could be started, or it died twice in one request."""


class Closed(RuntimeError):
    """The client was closed while its request waited."""


# --- the process ---------------------------------------------------------------------------------

@dataclasses.dataclass
class _Client:
    """What the process holds of one client: its main set's rows and the rest of its parts."""

    table: RowTable = dataclasses.field(default_factory=RowTable)
    origin: Any = None
    compared: tuple = ()
    environment: dict = dataclasses.field(default_factory=dict)
    settings: dict = dataclasses.field(default_factory=dict)


def _packed_change(change: dict) -> dict:
    """``change`` as it goes on the pipe: its rows, and each compared set's table, in pieces
    (``workbench.results.pieces``): the GUI thread has the GIL back between any two pickles; whole,
    5,000 rows were 17-28 ms to dump, a compared set of 5,000 rows 7.8 ms (issue 38)."""
    change = dict(change)
    if "reset" in change:
        *head, rows = change["reset"]
        change["reset"] = (*head, pieces.pack(rows))
    if "rows" in change:
        change["rows"] = pieces.pack(change["rows"])
    if "compared" in change:
        change["compared"] = [pieces.pack_set(rs) for rs in change["compared"]]
    return change


def _packed_reply(made: Prepared) -> tuple[bytes, list[bytes], list[bytes]]:
    """``made`` as it goes back: the rest, the verdicts in pieces (5.6 ms to read whole, two sets
    of 5,000 rows), and each chart's spec a piece of its own."""
    dump = partial(pickle.dumps, protocol=pickle.HIGHEST_PROTOCOL)
    return (dump(dataclasses.replace(made, specs={}, verdicts=[])), pieces.pack(made.verdicts),
            [dump(item) for item in made.specs.items()])


def _unpacked_reply(reply: tuple[bytes, list[bytes], list[bytes]]) -> Prepared:
    head, verdicts, specs = reply
    return dataclasses.replace(pieces.read(head), verdicts=pieces.unpack(verdicts),
                               specs=dict(pieces.read(p) for p in specs))


def serve(conn) -> None:
    """The spec process: answers ``make`` requests until the pipe closes (the window's process
    ended, or was killed: then the pipe closes too, and this process with it)."""
    priority.lower()                # the window's background: the GUI thread gets a core first
    clients: dict[int, _Client] = {}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        op, client = message[0], message[1]
        if op == "forget":
            clients.pop(client, None)
            continue
        _, _, change, generation, baseline_text, marks = message
        try:
            held = clients.get(client)
            if "reset" in change:
                origin, environment, settings, rows = change["reset"]
                held = clients[client] = _Client(RowTable(pieces.unpack(rows)), origin, (), dict(environment),
                                                 dict(settings))
            elif held is None or change.get("start") != len(held.table):
                conn.send(("resend", None))      # restarted, or out of step: everything again
                continue
            else:
                for row in pieces.unpack(change.get("rows", ())):
                    held.table.append(row)
            if "compared" in change:
                held.compared = tuple(pieces.unpack_set(p) for p in change["compared"])
            sets = sets_of(held.table.frame(), held.origin, held.compared, held.environment, held.settings)
            reply = ("ok", _packed_reply(prepare(generation, sets, baseline_text, marks).sent()))
        except Exception as e:                   # noqa: BLE001 - the caller shows it, with its text
            reply = ("error", e)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as e:                   # noqa: BLE001 - a reply that does not pickle
            conn.send(("error", RuntimeError(f"the specs could not be sent back: {e}")))


# --- the window's side ---------------------------------------------------------------------------

def _context():
    """Never a fork of the window's process (Qt, CUDA state): where there is one, a fork of
    multiprocessing's fork server, a clean process that imported this module once; a process of
    its own each time took a second or more of CPU to import pandas (every window of the tests
    started one)."""
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload([__name__, "pandas"])   # pandas is lazy here
        return ctx
    return mp.get_context("spawn")


class _Channel:
    """The one spec process of this process, and the pipe to it; one request at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process = None
        self.conn = None
        self.started = 0            # how many processes were started: a client's rows went with the last

    def ensure(self) -> int:
        if self.process is None or not self.process.is_alive():
            self.drop()
            ctx = _context()
            parent, child = ctx.Pipe()
            process = ctx.Process(target=serve, args=(child,), name="gpu-workbench-specs", daemon=True)
            try:
                with spawned.main_without_a_file():
                    process.start()
            except Exception as e:             # noqa: BLE001 - no process here: the caller makes them
                raise Unavailable(f"the spec process could not start: {e}") from e
            finally:
                child.close()
            self.process, self.conn = process, parent
            self.started += 1
        return self.started

    def request(self, message, closed: threading.Event) -> tuple[str, Any]:
        """Send ``message``, wait for the answer: a client ``closed`` meanwhile stops waiting (the
        process then ends, or its late answer would be taken for the next request's)."""
        self.conn.send(message)
        waited = 0.0
        while not self.conn.poll(WAIT_S):
            waited += WAIT_S
            if closed.is_set():
                self.drop()
                raise Closed("the window closed while the spec process worked")
            if waited >= ANSWER_S:
                raise TimeoutError(f"the spec process did not answer within {ANSWER_S:g} s")
        return self.conn.recv()

    def send(self, message) -> None:
        if self.conn is not None:
            try:
                self.conn.send(message)
            except (OSError, ValueError):
                pass

    def drop(self) -> None:
        """The process gone, or to be: its pipe closed, itself ended."""
        conn, process, self.conn, self.process = self.conn, self.process, None, None
        if conn is not None:
            conn.close()
        if process is not None:
            process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join(1.0)

    def close(self) -> None:
        with self.lock:
            self.drop()


_channel = _Channel()
_ids = itertools.count(1)
_clients: set[int] = set()       # those not closed: the process ends with the last


_gave_up = False


def usable() -> bool:
    """Whether requests go to the spec process: not after it could not be started."""
    return not _gave_up


def give_up() -> None:
    """No more requests to a process that cannot be started: the callers make the specs."""
    global _gave_up
    _gave_up = True


def shutdown() -> None:
    """End the spec process (the window closed; tests)."""
    _channel.close()


def process_id() -> int | None:
    """The spec process's pid, while it runs (tests end it to see it started again)."""
    p = _channel.process
    return p.pid if p is not None and p.is_alive() else None


def process() -> mp.process.BaseProcess | None:
    """The spec process, alive or not, until it is dropped: a caller can wait for it to end."""
    return _channel.process


def busy() -> bool:
    """Whether a request holds the pipe now (a test waits for one before it closes its client)."""
    return _channel.lock.locked()


class SpecClient:
    """One plots panel's requests: sends what changed of its parts since the process last had them."""

    def __init__(self) -> None:
        self.id = next(_ids)
        self.closed = threading.Event()     # set by close(), from any thread
        _clients.add(self.id)
        self._had: tuple | None = None   # (process started, epoch, count, origin, compared, environment, settings)

    def prepare(self, generation: int, parts: SetParts, baseline_text: str | None,
                marks: Sequence[tuple[float, str]] | None) -> Prepared:
        """What ``workbench.views.live.prepare`` makes of ``parts``' sets, made in the spec process."""
        with _channel.lock:
            for _ in range(2):
                if self.closed.is_set():
                    raise Closed("the client is closed")
                started = _channel.ensure()
                change = self._change(parts, started)
                try:
                    answer, made = _channel.request(("make", self.id, _packed_change(change), generation,
                                                     baseline_text, marks), self.closed)
                except (EOFError, OSError, TimeoutError) as e:
                    log.warning("the spec process went away (%s): starting it again", e)
                    _channel.drop()
                    self._had = None
                    continue
                if answer == "resend":
                    self._had = None
                    continue
                self._had = (started, parts.epoch, parts.count, parts.origin, parts.compared,
                             dict(parts.environment), dict(parts.settings))
                if answer == "error":
                    raise made
                return _unpacked_reply(made)
        raise Unavailable("the spec process died twice in one request")

    def warm(self) -> None:
        """The process started, if it is not (a window does it when it is ready, before a sweep)."""
        with _channel.lock:
            _channel.ensure()

    def next_change(self, parts: SetParts) -> dict:
        """What a request for ``parts`` would send now: only what changed since the process last had
        this client's parts, or everything (``"reset"``)."""
        return self._change(parts, _channel.started)

    def _change(self, parts: SetParts, started: int) -> dict:
        had = self._had
        if had is None or had[0] != started or had[1] != parts.epoch or had[2] > parts.count \
                or had[3] is not parts.origin or had[5] != parts.environment or had[6] != parts.settings:
            # The origin goes without its table: the rows sent are its rows.
            origin = None if parts.origin is None else dataclasses.replace(parts.origin, frame=pd.DataFrame())
            change = {"reset": (origin, dict(parts.environment), dict(parts.settings),
                                [Row.of(r) for r in parts.rows[:parts.count]]),
                      "compared": parts.compared}
            return change
        change = {"start": had[2], "rows": list(parts.rows[had[2]:parts.count])}
        if len(had[4]) != len(parts.compared) or any(a is not b for a, b in zip(had[4], parts.compared)):
            change["compared"] = parts.compared
        return change

    def close(self) -> None:
        """The process forgets this client's rows; the last client closed, the process ends (a
        window closed leaves no process behind). A request of this client waiting for the process
        stops waiting, within ``WAIT_S``."""
        self.closed.set()
        with _channel.lock:
            _clients.discard(self.id)
            if not _clients:
                _channel.drop()
            elif self._had is not None:
                _channel.send(("forget", self.id))
        self._had = None

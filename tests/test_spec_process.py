"""The spec process (``workbench.views.spec_process``): the charts' specs it makes from the rows
it is sent are those made in the window's own process from the same sets; it is sent only what
changed; it is started again where it died; the last client closed, it ends. No Qt."""
from __future__ import annotations

import dataclasses
import os
import signal

import pandas as pd
import pytest

from helpers import result_set
from workbench.results.rows import Row, to_frame
from workbench.results.sets import SetParts, sets_of
from workbench.results import pieces
from workbench.views import spec_process
from workbench.views.live import prepare


def _parts(rows, *, epoch=0, origin=None, compared=(), settings=None) -> SetParts:
    return SetParts(rows, len(rows), epoch, origin, tuple(compared), {"cpu": "Test CPU"},
                    settings if settings is not None else {"repeats": 5})


def _here(parts: SetParts, baseline=None):
    sets = sets_of(to_frame(list(parts.rows[:parts.count])), parts.origin, parts.compared, parts.environment,
                   parts.settings)
    return prepare(0, sets, baseline, None)


def _same(made, here) -> None:
    assert made.specs == here.specs
    assert made.summary == here.summary
    assert made.choices == here.choices and made.baseline == here.baseline
    assert made.labels == here.labels and made.transfers == here.transfers
    assert made.overlay is None and made.context is None       # the sets' tables stay there


@pytest.fixture
def client():
    c = spec_process.SpecClient()
    yield c
    c.close()


@pytest.fixture
def rows():
    return [Row.of(r) for r in result_set().frame.to_dict("records")]


def test_the_specs_made_there_are_those_made_here_as_rows_arrive_and_only_new_rows_go(client, rows):
    live = rows[:5]
    first = client.prepare(0, _parts(live), None, None)
    _same(first, _here(_parts(live)))
    assert spec_process.process_id() not in (None, os.getpid())
    live += rows[5:9]
    change = client.next_change(_parts(live))
    assert change["start"] == 5 and [r["size"] for r in change["rows"]] == [r["size"] for r in rows[5:9]]
    assert "reset" not in change and "compared" not in change
    _same(client.prepare(1, _parts(live), "numba", None), _here(_parts(live), "numba"))


def test_rows_replaced_or_sets_compared_are_sent_whole(client, rows):
    client.prepare(0, _parts(rows[:6]), None, None)
    # The same number of rows, other rows (a file opened): the epoch tells them apart.
    other = [Row.of(dict(r, dtype="float64")) for r in rows[:6]]
    assert "reset" in client.next_change(_parts(other, epoch=1))
    _same(client.prepare(1, _parts(other, epoch=1), None, None), _here(_parts(other, epoch=1)))
    compared = result_set(dtype="float64", source="b.json")
    change = client.next_change(_parts(other, epoch=1, compared=[compared]))
    assert "reset" not in change and change["compared"] == (compared,)
    _same(client.prepare(2, _parts(other, epoch=1, compared=[compared]), None, None),
          _here(_parts(other, epoch=1, compared=[compared])))
    # A file's set: the rows are its rows, its header what it says (the origin goes without its table).
    origin = dataclasses.replace(result_set(source="a.json"), settings={"repeats": 9})
    opened = _parts(rows, epoch=2, origin=origin)
    _same(client.prepare(3, opened, None, None), _here(opened))


def test_a_killed_process_is_started_again_and_sent_everything(client, rows):
    client.prepare(0, _parts(rows[:4]), None, None)
    pid = spec_process.process_id()
    os.kill(pid, signal.SIGKILL)
    spec_process.process().join(5)
    made = client.prepare(1, _parts(rows), None, None)
    _same(made, _here(_parts(rows)))
    assert spec_process.process_id() not in (None, pid)


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities here (os.getpriority)")
def test_the_process_runs_below_the_window_s_priority(client, rows):
    """Its work is the window's background: the scheduler gives the GUI thread the core first."""
    from workbench.core import priority
    client.prepare(0, _parts(rows), None, None)
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, spec_process.process_id()) == min(19, mine + priority.NICE)


def test_an_error_there_is_raised_here_with_its_text(client, rows):
    with pytest.raises(ValueError, match="could not convert string to float: 'x'"):
        client.prepare(0, _parts(rows), None, [("x", "a lesson's mark")])      # made there, raised here
    with pytest.raises(Exception, match="pickle"):
        client.prepare(1, _parts(rows, settings={"f": lambda: 0}), None, None)    # never sent
    _same(client.prepare(2, _parts(rows), None, None), _here(_parts(rows)))


def test_the_last_client_closed_the_process_ends(rows):
    a, b = spec_process.SpecClient(), spec_process.SpecClient()
    a.prepare(0, _parts(rows), None, None)
    b.prepare(0, _parts(rows[:3]), None, None)
    a.close()
    assert spec_process.process_id() is not None      # b still draws from it
    process = spec_process.process()
    b.close()
    assert spec_process.process_id() is None and not process.is_alive()


def test_a_client_closed_while_its_request_waits_on_a_stopped_process_stops_waiting(rows):
    """A window closing while the spec process is stopped (SIGSTOP) or swamped does not wait for
    it: the request gives up within ``WAIT_S`` and the process, whose late answer would be taken
    for the next request's, is ended."""
    import threading
    c = spec_process.SpecClient()
    c.prepare(0, _parts(rows[:3]), None, None)
    process = spec_process.process()
    os.kill(process.pid, signal.SIGSTOP)
    raised = []
    waiting = threading.Thread(target=lambda: raised.append(_raises(c.prepare, 1, _parts(rows), None, None)))
    try:
        waiting.start()
        while not spec_process.busy():      # until the request holds the pipe
            pass
        c.close()
        waiting.join(10)
        assert not waiting.is_alive() and isinstance(raised[0], spec_process.Closed)
        assert spec_process.process_id() is None and not process.is_alive()
    finally:
        if process.is_alive():
            os.kill(process.pid, signal.SIGKILL)


def _raises(f, *args):
    try:
        f(*args)
    except Exception as e:      # noqa: BLE001 - handed to the test to look at
        return e
    return None


def test_rows_and_specs_go_on_the_pipe_in_pieces_read_one_at_a_time(client, rows, monkeypatch):
    """Each pickle is made or read in one call that holds the GIL, and with it the window's GUI
    thread: the rows go in pieces of ``PIECE_ROWS``, the reply a piece per chart's spec, and what
    arrives is what was sent (issue 38: 5,000 rows in one pickle, 17 to 28 ms; the reply, 14 to 83)."""
    import gc
    import pickle
    monkeypatch.setattr(pieces, "PIECE_ROWS", 4)
    change = spec_process._packed_change(client.next_change(_parts(rows[:9])))
    *_, sent = change["reset"]
    assert [len(pickle.loads(p)) for p in sent] == [4, 4, 1]
    assert pieces.unpack(sent) == rows[:9]
    # A compared set's table goes in pieces too, and comes back as it was.
    compared = result_set(dtype="float64", source="b.json")
    change = spec_process._packed_change(client.next_change(_parts(rows[:9], compared=[compared])))
    shell, frames = change["compared"][0]
    assert shell.frame.empty and shell.source == "b.json" and len(frames) == -(-len(compared.frame) // 4)
    back_set = pieces.unpack_set(change["compared"][0])
    pd.testing.assert_frame_equal(back_set.frame, compared.frame)
    assert all(getattr(back_set, f.name) == getattr(compared, f.name) for f in dataclasses.fields(compared)
               if f.name != "frame")
    here = _here(_parts(rows[:9], compared=[compared]))
    head, verdicts, specs = spec_process._packed_reply(here.sent())
    assert len(specs) == len(here.specs) and len(verdicts) == -(-len(here.verdicts) // 4) and here.verdicts
    assert max(map(len, [head, *verdicts, *specs])) < len(pickle.dumps(here.sent())) / 2
    assert gc.isenabled()
    back = spec_process._unpacked_reply((head, verdicts, specs))
    assert gc.isenabled() and back == here.sent() and list(back.specs) == list(here.specs)
    # Through the process, rows sent a few at a time, then more of them: the same specs.
    _same(client.prepare(0, _parts(rows[:9]), None, None), _here(_parts(rows[:9])))
    _same(client.prepare(1, _parts(rows), None, None), _here(_parts(rows)))

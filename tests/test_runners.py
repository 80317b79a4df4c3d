"""The supervisor, the in-process runner and the cluster's runner honour one ``Runner`` protocol
(``workbench.measure.runner``): the command line, the window and ``workbench.sweep`` drive any of
them through it."""
from __future__ import annotations

import inspect

import pytest

from workbench.cluster.connect import Target
from workbench.cluster.runner import ClusterRunner
from workbench.measure import protocol
from workbench.measure.runner import InProcess, Runner
from workbench.measure.supervisor import Supervisor

METHODS = sorted(name for name, value in vars(Runner).items() if callable(value) and not name.startswith("_"))
RUNNERS = {"supervisor": Supervisor, "in-process": InProcess, "cluster": lambda: ClusterRunner(Target("local"))}


def test_the_protocol_names_what_the_command_line_and_the_window_call():
    assert METHODS == ["abort", "arm", "close", "probe", "renew", "run", "stop"]


@pytest.mark.parametrize("name", RUNNERS)
def test_each_runner_has_every_method_of_the_protocol_with_its_parameters(name):
    runner = RUNNERS[name]()          # nothing starts before a sweep or a probe: no process, no Dask
    try:
        assert isinstance(runner, Runner)
        for method in METHODS:
            wanted = list(inspect.signature(getattr(Runner, method)).parameters)[1:]     # less self
            assert list(inspect.signature(getattr(runner, method)).parameters) == wanted, method
    finally:
        runner.close()


def test_the_in_process_runner_probes_as_an_engine_process_answers():
    runner = InProcess()
    messages = list(runner.probe())
    assert [type(m) for m in messages] == [protocol.ProbeResults, protocol.Environment]
    assert messages[0].availability["numpy"].usable

"""Ten functions no one here tuned (tests/dropin/functions.py, each with its source), tried on the
drop-ins as a user's would be: Numba's on this machine, CuPy's where a GPU is, and the CuPy drop-in's
refusals on a stand-in for CuPy's arrays that refuses NumPy's conversion as CuPy's do."""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.catalog import dropin
from workbench.catalog.workloads import Context

sys.path.insert(0, str(Path(__file__).parent / "dropin"))
from functions import FUNCTIONS  # noqa: E402

from test_dropin import DeviceArray  # noqa: E402


def _ctx(inputs, cp=None):
    return Context(size=1024, dtype=np.dtype("float64"), session=SimpleNamespace(cp=cp))


def test_the_ten_are_real_and_mixed():
    assert len(FUNCTIONS) == 10 and all(f.__doc__ for f, *_ in FUNCTIONS.values())     # each names its source
    assert sum(numba is not True for _, _, numba, _ in FUNCTIONS.values()) >= 2
    assert sum(cupy is not True for _, _, _, cupy in FUNCTIONS.values()) >= 3


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_each_function_under_numba_njit_runs_right_or_says_why_in_one_line(name):
    f, setup, expected, _ = FUNCTIONS[name]
    inputs = setup(1024)
    compute = dropin._njit(f, inputs, _ctx(inputs))
    if expected is True:
        got, want = compute(), f(inputs)
        assert got.dtype == want.dtype and np.allclose(got, want)
    else:
        with pytest.raises(dropin.DropInError) as raised:
            compute()
        said = str(raised.value)
        assert said.startswith("does not compile under Numba: ") and expected in said and "\n" not in said


@pytest.mark.parametrize("name", [n for n, (_, _, _, cupy) in sorted(FUNCTIONS.items()) if cupy is not True])
def test_each_function_that_leaves_the_device_is_said_as_such_on_a_stand_in_for_cupy(name):
    f, setup, _, expected = FUNCTIONS[name]
    inputs = setup(1024)
    phases = dropin._cupy(f, inputs, _ctx(inputs, SimpleNamespace(asarray=DeviceArray, asnumpy=lambda d: d.a)))
    with pytest.raises(dropin.DropInError, match=expected):
        phases.h2d()
        phases.compute()


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_each_function_on_cupy_runs_right_or_says_why(name):
    cp = pytest.importorskip("cupy")
    f, setup, _, expected = FUNCTIONS[name]
    inputs = setup(1 << 14)
    phases = dropin._cupy(f, inputs, _ctx(inputs, cp))
    if expected is True:
        phases.h2d()
        phases.compute()
        got = phases.d2h()
        assert np.allclose(got, f(inputs))
    else:
        with pytest.raises(dropin.DropInError, match=expected):
            phases.h2d()
            phases.compute()

"""The window on a real X server (Xvfb, Qt's xcb platform), not only on the offscreen platform.

.ci/run installs Xvfb and the libraries Qt's xcb plugin needs from Debian's packages; where
they are missing this test skips and says which.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import display

HERE = Path(__file__).resolve().parent


@pytest.fixture
def xvfb():
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (Debian: apt-get install xvfb; .ci/run installs it)")
    missing = [so for so, _ in display.XCB_LIBRARIES if not display._loads(so)]
    if missing:
        pytest.skip(f"Qt's xcb platform lacks {', '.join(missing)} here (.ci/run installs them)")
    read, write = os.pipe()
    # -displayfd: Xvfb picks a free display number and writes it once it accepts connections.
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as f:
        number = f.readline().strip()
    try:
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_demo_session_on_a_real_x_server(xvfb):
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.update(DISPLAY=xvfb, QT_QPA_PLATFORM="xcb")
    assert display.problem(env) == ""
    proc = subprocess.run([sys.executable, str(HERE / "demo_session.py")], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "demo ok: platform xcb, 2 sweeps" in proc.stdout

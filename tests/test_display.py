"""Without a display, or without the X libraries Qt's xcb platform needs: one clear line, no abort."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from workbench.cli import display

NOT_ON_DEBIAN = {"libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"}


def test_no_display_says_so_and_how_to_go_on():
    why = display.problem({})
    assert "no display" in why and "QT_QPA_PLATFORM=offscreen" in why and "\n" not in why


def test_missing_xcb_libraries_are_named_with_their_debian_packages():
    why = display.problem({"DISPLAY": ":0"}, loads=lambda so: so not in NOT_ON_DEBIAN, x_answers=lambda d: True)
    for so in NOT_ON_DEBIAN:
        assert so in why
    assert "apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in why
    assert "QT_QPA_PLATFORM=offscreen" in why


@pytest.mark.parametrize("env,expect", [
    ({"QT_QPA_PLATFORM": "offscreen"}, ""),
    ({"QT_QPA_PLATFORM": "wayland"}, "WAYLAND_DISPLAY"),
    ({"WAYLAND_DISPLAY": "wayland-0"}, ""),
    ({"DISPLAY": ":5"}, "no X server answers on DISPLAY=:5"),
])
def test_platforms(env, expect):
    why = display.problem(env, loads=lambda so: True, x_answers=lambda d: False)
    assert (expect in why) if expect else why == ""


@pytest.mark.parametrize("extra", [{}, {"DISPLAY": ":987"}])
def test_the_window_command_without_a_display_prints_one_line(extra):
    """Before the check, Qt aborted the process (exit 134) with a paragraph about plugins."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(extra)
    proc = subprocess.run([sys.executable, "-m", "workbench"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu-workbench: cannot open a window"), proc.stderr
    assert "QT_QPA_PLATFORM=offscreen" in lines[0]


def test_the_hint_names_the_command_as_the_user_can_type_it(tmp_path, monkeypatch):
    """After `make run` the venv is not activated: the hint says .venv/bin/gpu-workbench, which runs."""
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "gpu-workbench").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setattr(display.shutil, "which", lambda name: None)
    assert "QT_QPA_PLATFORM=offscreen .venv/bin/gpu-workbench," in display.problem({})
    monkeypatch.setattr(display.shutil, "which", lambda name: str(bin_dir / name))    # activated
    assert "QT_QPA_PLATFORM=offscreen gpu-workbench," in display.problem({})

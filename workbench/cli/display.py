"""Can a window open here? Checked before Qt is touched, so the answer is one line, not an abort.

Qt aborts the process (SIGABRT, a paragraph about plugins) when it finds no display
or when its xcb platform plugin lacks a library that a plain Debian does not have
(libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1). This module asks the same
questions first, with ctypes, and says what is missing and how to fix it: the
Debian packages to install, or ``QT_QPA_PLATFORM=offscreen``, or the command line.
No Qt import here.
"""
from __future__ import annotations

import ctypes
import logging
import os
import shutil
import sys
from typing import Callable, Mapping

log = logging.getLogger(__name__)

#: What Qt's xcb platform plugin links (``ldd libqxcb.so libQt6XcbQpa.so.6``), with the
#: Debian package of each. The first three are the ones a plain Debian 12 lacks.
XCB_LIBRARIES = (
    ("libxcb-cursor.so.0", "libxcb-cursor0"),
    ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb.so.1", "libxcb1"),
    ("libX11-xcb.so.1", "libx11-xcb1"),
    ("libxcb-image.so.0", "libxcb-image0"),
    ("libxcb-randr.so.0", "libxcb-randr0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
    ("libxcb-render.so.0", "libxcb-render0"),
    ("libxcb-shape.so.0", "libxcb-shape0"),
    ("libxcb-shm.so.0", "libxcb-shm0"),
    ("libxcb-sync.so.1", "libxcb-sync1"),
    ("libxcb-util.so.1", "libxcb-util1"),
    ("libxcb-xfixes.so.0", "libxcb-xfixes0"),
    ("libxcb-xkb.so.1", "libxcb-xkb1"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libxkbcommon.so.0", "libxkbcommon0"),
    ("libfontconfig.so.1", "libfontconfig1"),
    ("libEGL.so.1", "libegl1"),
    ("libGL.so.1", "libgl1"),
    ("libdbus-1.so.3", "libdbus-1-3"),
)
#: Platforms that need no display at all.
HEADLESS = ("offscreen", "minimal", "vnc", "linuxfb", "eglfs", "minimalegl", "vkkhrdisplay")


def command() -> str:
    """The command a user types to start this workbench from here: ``gpu-workbench`` where that is on
    PATH (an activated venv), else the script's path (``.venv/bin/gpu-workbench`` after ``make run``)."""
    script = os.path.join(os.path.dirname(sys.executable), "gpu-workbench")
    on_path = shutil.which("gpu-workbench")
    if (on_path and os.path.realpath(on_path) == os.path.realpath(script)) or not os.path.exists(script):
        return "gpu-workbench"
    relative = os.path.relpath(script)
    return script if relative.startswith("..") else relative


def _offscreen_hint() -> str:
    cmd = command()
    return f"or open no window: QT_QPA_PLATFORM=offscreen {cmd}, or the command line ({cmd} run --help)"


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def _x_server_answers(display: str) -> bool:
    """Connect to the X server the way Qt will (libxcb), and disconnect."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return True     # reported as a missing library instead
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    conn = xcb.xcb_connect(display.encode(), None)
    try:
        return conn is not None and xcb.xcb_connection_has_error(conn) == 0
    finally:
        if conn is not None:
            xcb.xcb_disconnect(conn)


def problem(env: Mapping[str, str] | None = None, loads: Callable[[str], bool] = _loads,
            x_answers: Callable[[str], bool] = _x_server_answers) -> str:
    """'' when Qt can open a window here, else one line: what is missing and how to fix it."""
    env = os.environ if env is None else env
    platform = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if platform in HEADLESS:
        return ""
    if platform.startswith("wayland") or (not platform and not env.get("DISPLAY") and env.get("WAYLAND_DISPLAY")):
        if env.get("WAYLAND_DISPLAY"):
            return ""
        return f"cannot open a window: QT_QPA_PLATFORM={platform} but WAYLAND_DISPLAY is not set; {_offscreen_hint()}"
    if not env.get("DISPLAY"):
        return ("cannot open a window: no display (neither DISPLAY nor WAYLAND_DISPLAY is set; "
                f"over ssh use ssh -X, or start Xvfb); {_offscreen_hint()}")
    missing = [(so, pkg) for so, pkg in XCB_LIBRARIES if not loads(so)]
    if missing:
        return (f"cannot open a window: Qt's xcb platform needs {', '.join(so for so, _ in missing)}, "
                f"missing here; install them with: sudo apt-get install {' '.join(p for _, p in missing)}; "
                f"{_offscreen_hint()}")
    if not x_answers(env["DISPLAY"]):
        return f"cannot open a window: no X server answers on DISPLAY={env['DISPLAY']}; {_offscreen_hint()}"
    return ""

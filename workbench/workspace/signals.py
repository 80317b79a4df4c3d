"""Ctrl-C, SIGTERM and SIGHUP during a sweep: stop it and keep what was measured (the command line's
and ``workbench.sweep``'s, whose notebook interrupt is a SIGINT)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.measure.runner import Runner


class StopOnSignals:
    """Ctrl-C, SIGTERM and SIGHUP ask the sweep to stop (what was measured is kept and written);
    a second one ends the engine at once. The handler only sets flags (``Supervisor.stop`` and
    ``abort`` take no lock): it runs on the main thread, between any two of its bytecodes, perhaps
    while that thread holds the lock it would wait for. Once the sweep is over the handlers stay
    until :func:`main` returns, noting a signal without raising: what is left is writing the
    results, which no KeyboardInterrupt may cut in half."""

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
    _before: dict = {}          # the handlers in place before the first sweep, restored by main

    def __init__(self, runner: "Runner", signals: tuple[str, ...] = SIGNALS) -> None:
        self.runner: Runner | None = runner
        self.signals = signals
        self.received = ""
        self.status = 130                 # 128 + the first signal's number, as shells report it

    def _handle(self, signum, frame) -> None:
        import signal
        first = not self.received
        if first:
            self.received, self.status = signal.Signals(signum).name, 128 + signum
        runner = self.runner
        if runner is None:       # the sweep is over: the command is writing what it measured
            return
        if first:
            runner.stop()
        else:
            runner.abort()

    def __enter__(self) -> "StopOnSignals":
        import signal
        self.runner.arm()        # a signal from now on stops the sweep about to start, not only one running
        for name in self.signals:
            sig = getattr(signal, name, None)
            if sig is not None:
                before = signal.signal(sig, self._handle)
                StopOnSignals._before.setdefault(sig, before)
        return self

    def __exit__(self, *exc) -> None:
        self.runner = None

    @classmethod
    def restore(cls, ignore: bool = False) -> None:
        """Put back the handlers that were in place before the first sweep (when the command ends),
        or ignore those signals from now on (``ignore``: the program is about to exit)."""
        import signal
        for sig, handler in cls._before.items():
            signal.signal(sig, signal.SIG_IGN if ignore else handler)
        cls._before = {}

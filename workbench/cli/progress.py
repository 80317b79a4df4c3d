"""What the terminal shows while a sweep runs: a progress bar and the engine's warnings, on stderr."""
from __future__ import annotations

import sys

from workbench.cli.usage import UsageError


class Progress:
    """What the terminal shows of a workspace's sweep: a progress bar on stderr, the engine's
    warnings, a save that failed; a sweep the engine refused is a UsageError."""

    def __init__(self, ws, quiet: bool, already: int = 0) -> None:
        from workbench.measure import protocol
        from workbench.workspace import events as ev
        self.quiet, self.already, self.bar = quiet, already, None
        self.handlers = {ev.SweepPlanned: self.planned, ev.PointBegan: self.point_began,
                         ev.PointAdded: self.point_added, ev.SweepEnded: self.ended, ev.SweepBegan: self.ended,
                         ev.Trouble: self.trouble, ev.SaveFailed: self.save_failed, protocol.LogLine: self.log_line}
        self.dispatch = protocol.dispatch
        ws.listen(self.on_event)

    def on_event(self, event) -> None:
        self.dispatch(self.handlers, event)

    def log_line(self, m) -> None:
        from tqdm import tqdm
        if m.level in ("WARNING", "ERROR", "CRITICAL"):
            tqdm.write(f"gpu-workbench: {m.text}", file=sys.stderr)

    def planned(self, e) -> None:
        from tqdm import tqdm
        self.bar = tqdm(total=e.total, initial=self.already, unit="pt", disable=self.quiet, file=sys.stderr,
                        leave=False)
        self.already = 0

    def point_began(self, e) -> None:
        if self.bar is not None:
            self.bar.set_description(f"{e.backend} {e.size}" + (f" {e.variant}" if e.variant else ""))

    def point_added(self, e) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def ended(self, e) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def trouble(self, e) -> None:
        from tqdm import tqdm
        if e.refused:
            raise UsageError(e.text)
        if e.what == "died":
            tqdm.write(f"gpu-workbench: {e.text}", file=sys.stderr)
        elif e.what == "lost":          # the Dask scheduler went away: what was measured is kept
            tqdm.write(f"gpu-workbench: error: {e.text}", file=sys.stderr)

    def save_failed(self, e) -> None:
        from tqdm import tqdm
        tqdm.write(f"gpu-workbench: {'error: ' if e.final else ''}{e.text}"
                   + (f" ({e.unsaved} point(s) measured are not saved)" if e.final
                      else " (the points are kept; the next point's save tries again)"), file=sys.stderr)

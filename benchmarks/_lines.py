"""What the benchmark scripts print, kept to be written as Markdown when they are done."""
from __future__ import annotations

from pathlib import Path

LINES: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    LINES.append(line)


def write_lines(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(LINES) + "\n")

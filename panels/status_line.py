"""One status line: the first sentence of a message; the whole text goes to the Log tab."""
from __future__ import annotations

#: The longest status line: one short sentence; the whole text goes to the Log tab.
STATUS_CHARS = 120


def short(text: str) -> str:
    """``text`` as one status line: its first line, cut at a word within STATUS_CHARS, and a
    pointer to the Log tab where it was cut (every caller logs the whole text)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) <= STATUS_CHARS and line == text.strip():
        return line
    cut = line[:STATUS_CHARS - 30].rsplit(" ", 1)[0] if len(line) > STATUS_CHARS - 30 else line
    return f"{cut.rstrip(' ,;:')}... (the Log tab has it all)"

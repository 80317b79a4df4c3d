"""Files written: whole or not at all, never through a link, never over a file silently.

Write failures are made without chmod (tests may run as root, whom it does not stop): a
file-size limit in a subprocess, a folder deleted, a folder where the file goes, /dev/full.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap

import pytest

from workbench import atomic


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# The module every writer uses ----------------------------------------------------------------------

def test_a_write_replaces_the_target_whole_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    atomic.write_text(target, "new\n")
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640       # the old file's permissions kept
    assert _leftovers(tmp_path) == []


def test_links_planted_at_the_temporary_names_are_never_written_through(tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "r.csv"
    (tmp_path / ".r.csv.tmp").symlink_to(victim)                 # the old fixed name
    # The names mkstemp will try, in order: a link at each of the first three.
    names = iter(["aaaa", "bbbb", "cccc", "dddd"])
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    for n in ("aaaa", "bbbb", "cccc"):
        (tmp_path / f".r.csv.{n}.tmp").symlink_to(victim)
    atomic.write_text(target, "a,b\n1,2\n")
    assert target.read_text() == "a,b\n1,2\n" and not target.is_symlink()
    assert victim.read_text() == "precious"
    assert all((tmp_path / f".r.csv.{n}.tmp").is_symlink() for n in ("aaaa", "bbbb", "cccc"))
    assert not (tmp_path / ".r.csv.dddd.tmp").exists()


def test_a_target_that_is_a_link_is_replaced_and_the_file_it_points_to_is_untouched(tmp_path):
    victim = tmp_path / "settings.json"
    victim.write_text('{"keep": true}')
    target = tmp_path / "r.json"
    target.symlink_to(victim)
    atomic.write_text(target, "{}")
    assert not target.is_symlink() and target.read_text() == "{}"
    assert victim.read_text() == '{"keep": true}'
    dangling = tmp_path / "d.json"
    dangling.symlink_to(tmp_path / "nowhere" / "x.json")
    atomic.write_text(dangling, "{}")
    assert dangling.read_text() == "{}" and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("make", ["deleted folder", "folder at target", "device"])
def test_a_failed_write_raises_one_oserror_naming_the_target_and_leaves_the_old_one(tmp_path, make):
    if make == "deleted folder":
        target = tmp_path / "gone" / "r.json"
    elif make == "folder at target":
        target = tmp_path / "r.json"
        target.mkdir()
    else:
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full here")
        target = "/dev/full"          # renaming over it would replace the device, not write into it
    with pytest.raises(OSError) as caught:
        atomic.write_text(target, "{}")
    assert caught.value.filename == str(target)
    line = atomic.why(caught.value)
    assert line.startswith(f"cannot write {target}: ") and "\n" not in line
    if make == "folder at target":
        assert target.is_dir() and list(target.iterdir()) == []
    if make == "device":
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)        # never replaced by a file, even as root
    assert _leftovers(tmp_path) == []


def test_an_interrupted_or_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "c.png"
    target.write_bytes(b"old chart")
    for exc in (KeyboardInterrupt, ValueError):
        with pytest.raises(exc):
            with atomic.replacing(target) as f:
                f.write(b"half a chart")
                raise exc()
    assert target.read_bytes() == b"old chart" and _leftovers(tmp_path) == []


def test_a_file_size_limit_leaves_the_old_file_whole(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    code = textwrap.dedent(f"""
        import resource, sys
        from workbench import atomic
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
        try:
            atomic.write_text({str(target)!r}, "x" * 5000)
        except OSError as exc:
            print(atomic.why(exc))
            sys.exit(3)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.startswith(f"cannot write {target}: File too large")
    assert target.read_text() == "old" and _leftovers(tmp_path) == []

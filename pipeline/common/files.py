"""Whole-file writes: outputs go to a temporary sibling and are renamed into place, so a killed or failed stage
never leaves a half-written file where the previous good one was; JSON is written deterministically (sorted
keys, fixed separators), so the same data gives the same bytes and DVC sees no change."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_output(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temp file next to ``path``; rename it over ``path`` only if the block finishes. Temp files
    that a killed writer left behind (``.NAME.<pid>.*.part`` of a process that is gone) are removed first."""
    path = Path(path)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def current_umask() -> int:
    """The process umask, read without changing it where Linux says it (``/proc/self/status``)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def give_umask_modes(folder: Path) -> None:
    """Every file under ``folder`` gets the mode a plain ``open`` would (0666 less the umask). Libraries that
    write through a temporary file (safetensors' ``model.safetensors``) leave it 0600, which a group sharing
    the workspace and the DVC cache cannot read (docs/group-setup.md)."""
    mode = 0o666 & ~current_umask()
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            os.chmod(path, mode)


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new ``.NAME.<pid>.*.part`` next to ``path`` (the pid lets a later run tell a dead writer's
    leftovers from a live one's), after removing those of writers that are gone. mkstemp makes it 0600;
    it gets the mode a plain ``open`` would (0666 less the umask), so a group sharing a cache and a
    workspace can read what a stage wrote."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_parts(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".part", dir=path.parent)
    os.fchmod(fd, 0o666 & ~current_umask())
    return fd, tmp


def write_json_set(files: list[tuple[str | Path, Any, int | None]]) -> None:
    """Several JSON files that only make sense together (a split's train/dev/test and its sizes): each is
    written whole to a temporary name first, and only when all are complete are they renamed into place,
    so a kill leaves the old set or the new one, not a mix (short of the instant of the renames)."""
    temps: list[tuple[str, Path]] = []
    try:
        for path, obj, indent in files:
            path = Path(path)
            fd, tmp = _temp_beside(path)
            temps.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(obj, fh, indent=indent, sort_keys=True, ensure_ascii=False)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
    except BaseException:
        for tmp, _ in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    for tmp, path in temps:
        os.replace(tmp, path)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` is running (a temporary file's writer may still be writing it; a lease's holder
    still holds it). A process of another user counts as running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_parts(path: Path) -> list[Path]:
    """Remove ``.NAME.*.part`` siblings of ``path`` whose writer is no longer running."""
    removed = []
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.part"):
        pid = leftover.name[len(path.name) + 2:].split(".", 1)[0]
        if pid.isdigit() and pid_alive(int(pid)):
            continue
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
            removed.append(leftover)
    return removed


def write_json(path: str | Path, obj: Any, indent: int | None = 2) -> None:
    """Deterministic JSON (sorted keys, fixed separators) written atomically."""
    with atomic_output(path) as fh:
        json.dump(obj, fh, indent=indent, sort_keys=True, ensure_ascii=False)
        fh.write("\n")

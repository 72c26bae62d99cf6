"""Logging, progress and atomic output helpers shared by every stage.

Stages log through Prefect's run logger when they run inside a flow (so the UI shows them) and through the
standard library otherwise (tests, notebooks). Outputs are written to a temporary sibling and renamed into
place, so a killed or failed stage never leaves a half-written file where the previous good one was.
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def in_prefect_run() -> bool:
    """True inside a Prefect flow or task run (prefect is optional for library use)."""
    try:
        from prefect.context import FlowRunContext, TaskRunContext
    except ImportError:
        return False
    return bool(TaskRunContext.get() or FlowRunContext.get())


def get_logger(name: str = "qa_pipeline") -> logging.Logger | logging.LoggerAdapter:
    """Prefect's run logger inside a flow or task run, a plain logger outside one."""
    if in_prefect_run():
        from prefect.logging import get_run_logger

        return get_run_logger()
    logger = logging.getLogger(name)
    if not logging.getLogger().handlers and not logger.handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return logger


PROGRESS_EVERY_ENV = "QA_PIPELINE_PROGRESS_EVERY_S"


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


class ProgressReport:
    """Where a user looks: a log line every ``QA_PIPELINE_PROGRESS_EVERY_S`` seconds (default 20) with the count,
    the rate and, when the total is known, the share done and the time left; inside a Prefect flow run the
    lines go to the run's log in the UI and a progress artifact (``create_progress_artifact``) moves with
    them. The tqdm bar on stderr is for a terminal and is off under ``QA_PIPELINE_NO_PROGRESS``."""

    def __init__(self, desc: str, total: int | None = None, unit: str = "it", every_s: float | None = None):
        self.desc, self.total, self.unit = desc, total, unit
        self.every_s = float(os.environ.get(PROGRESS_EVERY_ENV) or 20.0) if every_s is None else every_s
        self.n, self.t0 = 0, time.monotonic()
        self._last = self.t0
        self._artifact_id = None
        self._log = get_logger()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = self.n / elapsed
        text = f"{self.desc}: {self.n:,}" + (f"/{self.total:,}" if self.total else "") + f" {self.unit}"
        if self.total:
            text += f" ({100 * self.n / self.total:.0f}%)"
        text += f", {rate:,.1f} {self.unit}/s, {_duration(elapsed)} elapsed"
        if self.total and rate > 0 and self.n < self.total:
            text += f", about {_duration((self.total - self.n) / rate)} left"
        return text

    def _artifact(self) -> None:
        if not self.total or not in_prefect_run():
            return
        share = round(min(100.0, 100.0 * self.n / self.total), 1)  # the UI shows it as given: 13.3, not 13.333333333333334
        try:
            from prefect.artifacts import (
                create_progress_artifact,
                update_progress_artifact,
            )

            if self._artifact_id is None:
                self._artifact_id = create_progress_artifact(progress=share, description=self.desc)
            else:
                update_progress_artifact(self._artifact_id, progress=share)
        except Exception as exc:  # noqa: BLE001 - progress display must never fail the stage
            self._log.debug("progress artifact not updated: %s", exc)

    def update(self, n: int = 1) -> None:
        self.set(self.n + n)

    def set(self, n: int) -> None:
        """The count so far (for work counted elsewhere, e.g. captures a crawler subprocess stored)."""
        self.n = n
        now = time.monotonic()
        if now - self._last >= self.every_s:
            self._last = now
            self._log.info(self.line())
            self._artifact()

    def close(self) -> None:
        self._log.info(self.line())
        self._artifact()


def progress(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """Iterate with a ``ProgressReport`` (log lines with counts, rate and ETA; a Prefect progress artifact)
    and a tqdm bar on stderr unless QA_PIPELINE_NO_PROGRESS is set."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    report = ProgressReport(desc, total, unit)
    disable = bool(os.environ.get("QA_PIPELINE_NO_PROGRESS"))
    for item in tqdm(iterable, desc=desc, total=total, unit=unit, disable=disable, mininterval=1.0, leave=False):
        yield item
        report.update()
    report.close()


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


# ------------------------------------------------------------------ local servers started as subprocesses


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on loopback now (the server started next binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_until_serving(url: str, proc: subprocess.Popen, timeout: float, log_path: Path | str) -> None:
    """Poll ``url`` until it answers 2xx; fail early if ``proc`` dies, and stop it if it never answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}; see {log_path}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if 200 <= r.status < 300:
                    return
        except OSError:
            time.sleep(0.3)
    stop_process_group(proc)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f}s; see {log_path}")


_PR_SET_PDEATHSIG = 1


def dies_with_this_process(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """``preexec_fn`` for a child that must not outlive the stage that starts it (a crawler, a replay
    server, torchrun): Linux sends the child ``sig`` when this process dies, even by ``kill -9``, which no
    ``finally`` or process-group cleanup here can do. Elsewhere a no-op. The kernel watches the thread that
    forks, so call it from the stage's own thread, which lives as long as the child."""
    parent = os.getpid()
    return lambda: die_with_parent(parent, sig)


def die_with_parent(parent: int | None = None, sig: int = signal.SIGTERM) -> None:
    """This process gets ``sig`` when its parent dies (Linux; elsewhere a no-op): for a process another
    tool started (a torchrun worker), so it cannot outlive that tool killed with -9. ``parent``: the pid
    the parent had, to catch a parent that died before the call took effect."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), sig)


def stop_process_group(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30.0) -> None:
    """Stop a server started with ``start_new_session=True``: its own group, so only what we started.

    ``sig`` first (SIGINT for a Prefect runner, so it pauses its deployments), SIGKILL after ``timeout``.
    """
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

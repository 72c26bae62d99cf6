"""The Prefect server a plain ``dvc repro`` reports to, started at most once and shared by every stage.

Each stage is its own process (DVC runs ``python -m flows.stage NAME``). Without ``PREFECT_API_URL`` Prefect would
start a temporary server inside every one of them (8-15 s each here). Instead the first stage that needs a
server starts one on 127.0.0.1:4200 (or a free port) under a small supervisor (``python -m flows._server``) and records it
in ``.prefect/shared-server.json``; later stages find it there and reuse it. Each stage holds a lease file while
it runs; the supervisor stops the server once no lease has been held for ``QA_PIPELINE_PREFECT_IDLE_S`` seconds
(default 600, time to look at the runs in the UI), by PID. A no-op ``dvc repro`` runs no stage and starts nothing.
``make serve`` runs its scheduler against this same server (starting it if needed, holding a lease while it
serves), so there is one server and one database (``PREFECT_HOME=.prefect``, see ``flows/__init__.py``) for
every run. It listens on the port this checkout had last time (``.prefect/last-port``), else 127.0.0.1:4200, else
a port of the checkout's own derived from its path (``QA_PIPELINE_PREFECT_PORT`` overrides), so the "View at"
links a run prints stay valid: after an idle stop, ``make serve`` opens the same address on the same runs, and
a second checkout keeps its own address instead of a new random one each time.
With ``PREFECT_API_URL`` set (a team server) none of this happens: runs go there.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from flows import checkout_root
from pipeline.common.files import pid_alive
from pipeline.common.processes import free_port, stop_process_group, wait_until_serving

# this checkout's: relative to where the stage runs, except in a DVC experiment's copy (.dvc/tmp/exps/...), whose
# stages report to the checkout's server (flows.checkout_root)
HOME = Path(".prefect") if checkout_root(Path.cwd()) == Path.cwd() else checkout_root(Path.cwd()) / ".prefect"
STATE = HOME / "shared-server.json"
LEASES = HOME / "leases"
LAST_RELEASE = LEASES / ".last-release"
IDLE_ENV = "QA_PIPELINE_PREFECT_IDLE_S"
DEFAULT_IDLE_S = 600.0
PORT_ENV = "QA_PIPELINE_PREFECT_PORT"
DEFAULT_PORT = 4200


def _port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether the server could listen on ``port``: bound as uvicorn binds (``SO_REUSEADDR``), so the
    TIME_WAIT sockets a stopped server leaves for a minute do not count as taken (without it a quick
    restart of ``make serve`` moved to a random port and every printed "View at" link broke)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
            s.listen(1)
        except OSError:
            return False
    return True


LAST_PORT = HOME / "last-port"  # this checkout's server address, kept across starts


def checkout_port(checkout: Path | None = None) -> int:
    """A port of this checkout's own, the same on every start (4201-4999, from its path): where its server goes
    when 4200 is another's, so two checkouts on one machine each keep an address."""
    import zlib

    path = str((checkout or Path.cwd()).resolve())
    return 4201 + zlib.crc32(path.encode("utf-8")) % 799


def parse_port(value: str) -> int:
    """``QA_PIPELINE_PREFECT_PORT`` as a port a user's server may take (1024-65535), or a one-line error naming
    the variable (not a traceback, nor a wait for a server that cannot start)."""
    text = value.strip()
    if not text.isdigit() or not 1024 <= int(text) <= 65535:
        raise SystemExit(f"{PORT_ENV}={value!r}: a port number from 1024 to 65535 (or unset: this checkout's own)")
    return int(text)


def preferred_port() -> tuple[int, str]:
    """Where this checkout's server listens, and, when that is not 4200, why. In order: the port set in
    ``QA_PIPELINE_PREFECT_PORT``; the port this checkout's server had last time (``.prefect/last-port``), so the
    "View at" links printed before still open; 4200; this checkout's own port (:func:`checkout_port`); any
    free port. The choice is recorded for next time."""
    explicit = os.environ.get(PORT_ENV)
    if explicit:
        port = parse_port(explicit)
        if _port_free(port):
            return port, ""
        chosen = free_port()
        return chosen, f"{PORT_ENV}={port} is taken by another program; using {chosen} this time"
    with contextlib.suppress(OSError, ValueError):
        last = int(LAST_PORT.read_text(encoding="utf-8").strip())
        if _port_free(last):
            return last, "" if last == DEFAULT_PORT else f"this checkout's port (.prefect/last-port; 4200 was taken when it was chosen)"
    for port, why in ((DEFAULT_PORT, ""),
                      (checkout_port(), f"4200 is taken (another checkout's server or another program); "
                                        f"this checkout keeps this port from now on (.prefect/last-port)")):
        if _port_free(port):
            break
    else:
        port, why = free_port(), "4200 and this checkout's own port are both taken; a free port this time"
        return port, why
    HOME.mkdir(exist_ok=True)
    LAST_PORT.write_text(f"{port}\n", encoding="utf-8")
    return port, why


def server_env(host: str, port: int) -> dict[str, str]:
    """The server's own address in its settings, not only on its command line: the UI asks the server
    (``/ui-settings``) where the API is, and Prefect answers from these settings (default 127.0.0.1:4200
    whatever ``--port`` says), so a server on another port showed another server's runs, or none."""
    api = f"http://{host}:{port}/api"
    return {"PREFECT_SERVER_API_HOST": host, "PREFECT_SERVER_API_PORT": str(port), "PREFECT_UI_API_URL": api,
            "PREFECT_API_URL": api}


def start_server(host: str, port: int, log_path: Path) -> subprocess.Popen:
    """``prefect server start`` on ``host:port`` in its own process group, returned once it answers."""
    log = open(log_path, "ab")
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("prefect")), "server", "start", "--host", host, "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **server_env(host, port)},
    )
    wait_until_serving(f"http://{host}:{port}/api/health", proc, 180, log_path)
    return proc


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
            return 200 <= r.status < 300
    except OSError:
        return False


def running_server() -> str | None:
    """The shared server's API URL if one is up (and its supervisor alive), else None."""
    try:
        state = json.loads(STATE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if pid_alive(int(state.get("supervisor_pid", 0))) and _healthy(state["api_url"]):
        return state["api_url"]
    return None


def server_note() -> str:
    """Why the running server is not on 4200, as its supervisor recorded it ("" when it is)."""
    try:
        return str(json.loads(STATE.read_text(encoding="utf-8")).get("port_note") or "")
    except (OSError, ValueError):
        return ""


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    """One stage at a time decides whether to start the server (two concurrent ``dvc repro`` would race)."""
    HOME.mkdir(exist_ok=True)
    with open(HOME / "shared-server.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def shared_api_url(timeout_s: float = 180.0, announce: bool = True) -> str:
    """The shared server's API URL, starting it (and its supervisor) when none is running. ``announce``:
    say where its UI is and when it stops (a stage; ``make serve`` holds it up and says so itself)."""
    if os.environ.get(PORT_ENV):  # checked here, where the user sees it, not only in the supervisor's log
        parse_port(os.environ[PORT_ENV])
    with _lock():
        url = running_server()
        if url:
            return url
        STATE.unlink(missing_ok=True)
        idle = os.environ.get(IDLE_ENV, str(DEFAULT_IDLE_S))
        with open(HOME / "shared-server.log", "ab") as log:  # the supervisor keeps its own copy of the handle
            # run from the checkout (not an experiment's copy, which DVC deletes while the server may still serve)
            supervisor = subprocess.Popen([sys.executable, "-m", "flows._server", "--idle", idle], stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True,
                                          cwd=HOME.resolve().parent)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if supervisor.poll() is not None:
                raise RuntimeError(f"the shared Prefect server exited with {supervisor.returncode}; see "
                                   f"{HOME / 'shared-server.log'}")
            url = running_server()
            if url and announce:
                note = server_note()
                print(f"Prefect UI for these runs: {url.removesuffix('/api')}{f' ({note})' if note else ''} (this "
                      f"server stays up, holding its port, until {float(idle):.0f} s pass without a stage, so the "
                      f"runs can be read after the build; {IDLE_ENV} sets that; `make serve` shows every run again)",
                      file=sys.stderr)
            if url:
                return url
            time.sleep(0.5)
    raise TimeoutError(f"the shared Prefect server did not start within {timeout_s:.0f} s; see "
                       f"{HOME / 'shared-server.log'}")


@contextlib.contextmanager
def stage_lease() -> Iterator[None]:
    """Held while a stage runs: the supervisor does not stop the server under a running stage. It also names
    the stage's flow run and server (:func:`record_run`), so a stage killed with SIGKILL, which cannot say it
    ended, is marked Crashed by whoever finds its lease next (:func:`reap_killed_runs`)."""
    LEASES.mkdir(parents=True, exist_ok=True)
    lease = LEASES / str(os.getpid())
    lease.touch()
    try:
        yield
    finally:
        lease.unlink(missing_ok=True)
        LAST_RELEASE.touch()


def record_run(flow_run_id: str, api_url: str) -> None:
    """``on_running`` hook of a stage: its lease says which run on which server it is."""
    lease = LEASES / str(os.getpid())
    if lease.exists():
        tmp = lease.with_name(f".{lease.name}.tmp")
        tmp.write_text(json.dumps({"flow_run_id": flow_run_id, "api_url": api_url}), encoding="utf-8")
        tmp.replace(lease)


def crash_if_running(api_url: str, flow_run_id: str, pid: int) -> bool:
    """Set a run that is still Running to Crashed: its process is gone without a word (SIGKILL, the OOM killer,
    a lost machine), and a Running run would hold its deployment's concurrency slot for good. Prefect's own
    client, so a server with auth and CSRF protection takes it like any other call of this user's."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.states import Crashed

    try:
        with temporary_settings({PREFECT_API_URL: api_url}), get_client(sync_client=True) as client:
            run = client.read_flow_run(flow_run_id)
            if run.state is None or run.state.type.value != "RUNNING":
                return False
            client.set_flow_run_state(flow_run_id, Crashed(
                message=f"the stage's process (pid {pid}) ended without reporting: killed (SIGKILL or lost)"),
                force=True)
            return True
    except Exception:  # noqa: BLE001 - a server that is gone or refuses: the lease goes, nothing else to do
        return False


def reap_killed_runs() -> list[str]:
    """Leases of stages whose process is gone: their runs marked Crashed (when still Running), the leases
    removed. Called by the supervisor's idle loop and by every stage as it starts."""
    reaped = []
    for lease in LEASES.glob("[0-9]*"):
        pid = int(lease.name)
        if pid_alive(pid):
            continue
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            owner = json.loads(lease.read_text(encoding="utf-8") or "{}")
            if owner and crash_if_running(str(owner["api_url"]), str(owner["flow_run_id"]), pid):
                reaped.append(str(owner["flow_run_id"]))
        lease.unlink(missing_ok=True)
    return reaped


def _live_leases() -> int:
    reap_killed_runs()  # a stage killed with SIGKILL leaves its lease behind
    return sum(1 for lease in LEASES.glob("[0-9]*") if pid_alive(int(lease.name)))


def stop_shared_server(timeout_s: float = 60.0) -> bool:
    """Stop the running shared server through its supervisor (SIGTERM; it stops the server and removes its
    state). For ``make serve`` when it started the server itself. True if one was stopped."""
    try:
        state = json.loads(STATE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    pid = int(state.get("supervisor_pid", 0))
    if not pid or not pid_alive(pid):
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it if it is our child
    return True


def supervise(idle_s: float, poll_s: float = 1.0) -> int:
    """Start the server, publish it, and stop it after ``idle_s`` without a live lease (or on SIGTERM)."""

    def _terminate(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _terminate)
    port, why = preferred_port()
    server = start_server("127.0.0.1", port, HOME / "shared-server.log")
    state = {"api_url": f"http://127.0.0.1:{port}/api", "supervisor_pid": os.getpid(), "server_pid": server.pid,
             "checkout": str(Path.cwd().resolve()), "port_note": why}
    tmp = STATE.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    tmp.replace(STATE)
    LEASES.mkdir(parents=True, exist_ok=True)
    last_busy = time.time()  # wall clock, comparable with the release file's mtime
    try:
        while server.poll() is None:
            time.sleep(poll_s)
            if _live_leases():
                last_busy = time.time()
                continue
            with contextlib.suppress(FileNotFoundError):  # a stage that came and went between two polls
                last_busy = max(last_busy, LAST_RELEASE.stat().st_mtime)
            if time.time() - last_busy > idle_s or not HOME.is_dir():  # idle, or its checkout was deleted
                break
    finally:
        stop_process_group(server)  # first: nothing below may keep it running (a deleted checkout raises)
        with contextlib.suppress(OSError, ValueError), _lock():
            if json.loads(STATE.read_text(encoding="utf-8")).get("supervisor_pid") == os.getpid():
                STATE.unlink()
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m flows._server", description=__doc__.split("\n")[0])
    ap.add_argument("--idle", type=float, default=DEFAULT_IDLE_S)
    sys.exit(supervise(ap.parse_args().idle))

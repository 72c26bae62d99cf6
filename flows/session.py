"""Run one command against a short-lived local Prefect server: ``python -m flows.session -- dvc repro``.

Without ``PREFECT_API_URL`` every flow starts its own ephemeral server (about 15 s each on two cores);
a whole ``dvc repro`` shares one here instead, on a free loopback port, stopped by PID afterwards. When
``PREFECT_API_URL`` is already set (``make serve`` is running, or a real server), the command just runs
against it and its flow runs show up in that UI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flows.serve import start_server
from pipeline.runtime import free_port, stop_process_group


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("usage: python -m flows.session -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    if os.environ.get("PREFECT_API_URL"):
        return subprocess.call(argv)
    port = free_port()
    Path(".prefect").mkdir(exist_ok=True)
    server = start_server("127.0.0.1", port, Path(".prefect/session-server.log"))
    env = dict(os.environ, PREFECT_API_URL=f"http://127.0.0.1:{port}/api")
    try:
        return subprocess.call(argv, env=env)
    finally:
        stop_process_group(server)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Commands a test runs as a user would, in a clone: the project's venv first on PATH, analytics and progress
bars off, and a failure that shows the command's last output."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path


def user_env(**extra: str) -> dict[str, str]:
    venv = Path(sys.executable).parent
    return dict(os.environ, PATH=f"{venv}{os.pathsep}{os.environ['PATH']}", DVC_NO_ANALYTICS="1",
                QA_PIPELINE_NO_PROGRESS="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org", **extra)


@contextlib.contextmanager
def with_prefect(env: dict[str, str], home: Path):
    """``env`` pointed at a Prefect server of the test's own, stopped by PID at the end: the clone's stages
    then start no shared server that would outlive the test's folder."""
    from tests.conftest import prefect_server

    home.mkdir(parents=True, exist_ok=True)
    with prefect_server(home) as api:
        yield dict(env, PREFECT_API_URL=api, PREFECT_HOME=str(home))


def run(cmd: list, cwd: Path, env: dict, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert res.returncode == 0, f"{cmd}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    return res

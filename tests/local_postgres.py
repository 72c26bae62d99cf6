"""PostgreSQL (Debian's server binaries) on 127.0.0.1 for tests: a throwaway cluster in a temporary folder,
run as the unprivileged ``postgres`` user when the tests run as root (initdb refuses root), stopped with
``pg_ctl stop`` on that data folder."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from pipeline.common.processes import free_port


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@contextlib.contextmanager
def postgres(root: Path, password: str) -> Iterator[str]:
    """Yield an asyncpg URL ``postgresql+asyncpg://prefect:<password>@127.0.0.1:<port>/prefect``."""
    bin_dir = pg_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL server binaries not found (apt-get install postgresql)")
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    root.mkdir(parents=True, exist_ok=True)
    data, log = root / "pgdata", root / "postgres.log"
    pwfile = root / "pw"
    pwfile.write_text(password + "\n")
    if as_user:
        shutil.chown(root, "postgres")
        shutil.chown(pwfile, "postgres")
    os.chmod(pwfile, 0o600)

    def run(*cmd: str) -> None:
        res = subprocess.run([*as_user, *cmd], capture_output=True, text=True, cwd=root)
        if res.returncode != 0:
            raise RuntimeError(f"{Path(cmd[0]).name} failed ({res.returncode}): {res.stderr[-1500:]}")

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "prefect", "--auth=scram-sha-256",
        f"--pwfile={pwfile}", "-E", "UTF8")
    port = free_port()
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o",
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root}", "start")
    try:
        env = dict(os.environ, PGPASSWORD=password)
        subprocess.run([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "prefect", "prefect"],
                       check=True, capture_output=True, text=True, env=env)
        yield f"postgresql+asyncpg://prefect:{password}@127.0.0.1:{port}/prefect"
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"],
                       capture_output=True, cwd=root)

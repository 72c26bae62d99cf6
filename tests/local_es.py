"""noida-db as a local Elasticsearch for tests and benchmarks (a real HTTP server speaking the ES API).

It is a development stand-in: single node, in-memory, and slow at search on more than a few thousand
documents (seconds per query on BEIR SciFact's 5,183), so tests keep their corpora small. Bound to
127.0.0.1 and stopped by the PID started here.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from pipeline.common.processes import free_port, stop_process_group, wait_until_serving


@contextlib.contextmanager
def noida_elasticsearch(root: Path) -> Iterator[str]:
    exe = shutil.which("noida-db", path=str(Path(sys.executable).parent)) or shutil.which("noida-db")
    if exe is None:
        raise RuntimeError("noida-db is not installed (pip install noida-db; it is in requirements.lock)")
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = root / "noida.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen([exe, "start", "--only", "elasticsearch", "--host", "127.0.0.1",
                                 "--elasticsearch-port", str(port), "--data-dir", str(root / "data")],
                                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/", proc, 60, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process_group(proc, timeout=10)

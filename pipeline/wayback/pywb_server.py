"""Run pywb on loopback over local WARC files: an offline Wayback Machine with the same CDX and ``id_`` API.

pywb cannot share an environment with Prefect, so it lives in its own venv (``.venv-pywb``, made by
``make``) and is only ever started as a subprocess. The server binds to 127.0.0.1 and is stopped by the PID
this module started, never by name.

    python -m pipeline.wayback.pywb_server data/sample/bbc.warc.gz --port 8080
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pipeline.common.processes import dies_with_this_process, free_port, stop_process_group, wait_until_serving

REPO_ROOT = Path(__file__).resolve().parents[2]


def pywb_bin_dir() -> Path:
    """Where ``wayback`` and ``wb-manager`` live: $QA_PIPELINE_PYWB_BIN, else the repo's ``.venv-pywb``."""
    env = os.environ.get("QA_PIPELINE_PYWB_BIN")
    path = Path(env) if env else REPO_ROOT / ".venv-pywb" / "bin"
    if not (path / "wayback").exists():
        raise RuntimeError(f"pywb not found in {path}: run `make setup` (creates .venv-pywb) "
                           "or set QA_PIPELINE_PYWB_BIN to a folder holding `wayback` and `wb-manager`")
    return path


class LocalPywb:
    """Context manager: a pywb collection over ``warcs`` under ``root``, served on 127.0.0.1.

    ``base_url`` (e.g. ``http://127.0.0.1:8123``) and ``collection`` form the endpoint later stages use:
    ``{base_url}/{collection}/cdx`` and ``{base_url}/{collection}/{timestamp}id_/{url}``.
    """

    def __init__(self, warcs: list[Path], root: Path, collection: str, port: int | None = None,
                 host: str = "127.0.0.1", startup_timeout: float = 60.0):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"pywb must bind to loopback, got {host!r}")
        self.warcs = [Path(w).resolve() for w in warcs]
        for w in self.warcs:
            if not w.is_file():
                raise FileNotFoundError(f"WARC file not found: {w}")
        self.root = Path(root).resolve()
        self.collection = collection
        self.host = host
        self.port = port or free_port(host)
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/{self.collection}"

    def _prepare(self, bindir: Path) -> None:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", self.collection):
            raise ValueError(f"pywb collection must be a plain name, got {self.collection!r}")
        coll = self.root / "collections" / self.collection
        if coll.resolve().parent != (self.root / "collections").resolve():
            raise ValueError(f"pywb collection {self.collection!r} resolves outside {self.root / 'collections'}")
        if coll.exists():
            shutil.rmtree(coll)
        self.root.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(bindir / "wb-manager"), "init", self.collection], cwd=self.root, check=True,
                       capture_output=True)
        archive = coll / "archive"
        for w in self.warcs:
            (archive / w.name).symlink_to(w)
        subprocess.run([str(bindir / "wb-manager"), "reindex", self.collection], cwd=self.root, check=True,
                       capture_output=True)

    def start(self) -> "LocalPywb":
        bindir = pywb_bin_dir()
        self._prepare(bindir)
        self._log = open(self.root / "pywb.log", "ab")
        self.proc = subprocess.Popen(
            [str(bindir / "wayback"), "--bind", self.host, "--port", str(self.port), "--threads", "8"],
            cwd=self.root, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=dies_with_this_process(),  # a stage killed with -9 takes its replay server along
        )
        try:
            wait_until_serving(f"{self.endpoint}/cdx?url=example.invalid/&limit=1", self.proc,
                               self.startup_timeout, self.root / "pywb.log")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc, timeout=10)
        self.proc = None
        if self._log:
            self._log.close()
            self._log = None

    def __enter__(self) -> "LocalPywb":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.wayback.pywb_server", description=__doc__.split("\n")[0])
    ap.add_argument("warcs", nargs="+", type=Path)
    ap.add_argument("--root", type=Path, default=Path(".pywb"))
    ap.add_argument("--collection", default="sample")
    ap.add_argument("--port", type=int, default=8080)
    args = ap.parse_args(argv)
    with LocalPywb(args.warcs, args.root, args.collection, args.port) as server:
        print(f"pywb serving {len(args.warcs)} WARC file(s) at {server.endpoint} (CDX: {server.endpoint}/cdx); "
              "Ctrl-C stops it", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

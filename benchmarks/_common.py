"""Shared by benchmarks: machine description and result writing."""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    return {"python": platform.python_version(), "cpu_count": os.cpu_count(), "machine": platform.machine(),
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def scaled_dump(src: Path, dst: Path, times: int) -> None:
    """A CirrusSearch dump ``times`` the size of ``src``: its articles repeated under new titles."""
    import gzip

    with gzip.open(dst, "wt", encoding="utf-8") as out:
        for r in range(times):
            with gzip.open(src, "rt", encoding="utf-8") as fh:
                for line in fh:
                    obj = json.loads(line)
                    if "title" in obj and r:
                        obj["title"] = f"{obj['title']} ({r})"
                    out.write(json.dumps(obj, ensure_ascii=False) + "\n")


def write_result(name: str, result: dict, out_dir: Path | None = None) -> Path:
    out_dir = out_dir or RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **result}, indent=2, sort_keys=True) + "\n")
    print(json.dumps(result, indent=2, sort_keys=True))
    return path


def dvclive_series(data: bytes) -> list[tuple[int, float]]:
    """A DVCLive ``plots/metrics/.../<name>.tsv`` (``step`` and one value column) as (step, value) pairs."""
    rows = csv.DictReader(io.StringIO(data.decode("utf-8")), delimiter="\t")
    return [(int(r["step"]), float(r[k])) for r in rows for k in r if k != "step"]

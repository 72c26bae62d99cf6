"""Shared by benchmarks: machine description and result writing."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    return {"python": platform.python_version(), "cpu_count": os.cpu_count(), "machine": platform.machine(),
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def write_result(name: str, result: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **result}, indent=2, sort_keys=True) + "\n")
    print(json.dumps(result, indent=2, sort_keys=True))
    return path

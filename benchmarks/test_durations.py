"""Where `make test`'s time goes: one whole run's per-test seconds, written by the suite itself.

``tests/conftest.py`` records every test's setup, call and teardown seconds and whether it is marked slow; with
``QA_PIPELINE_TEST_DURATIONS=FILE`` it hands them to :func:`write_profile` when the session ends, which adds the
totals (all, slow, not slow), the slowest tests and the machine (processor, cores, native bf16 or not), so a
reader can tell what a figure was measured on. ``make test-durations`` runs the whole suite so and writes
``benchmarks/results/test_durations.json``; refresh it when the suite changes much. Every ``make test`` also
prints the slowest tests (pytest's ``--durations``).

    python -m benchmarks.test_durations [FILE]      # print a profile's totals and its slowest tests
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any


def machine() -> dict[str, Any]:
    """The processor a profile was measured on: its name, cores and whether it computes bf16 natively (where
    the training tests train in bf16, elsewhere in fp32, which is slower)."""
    name, flags = platform.processor() or platform.machine(), ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name") and name in ("", platform.machine()):
                name = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = line
    except OSError:
        pass
    return {"processor": name, "cores": os.cpu_count(), "avx512f": " avx512f" in flags,
            "avx512_bf16": " avx512_bf16" in flags, "python": platform.python_version()}


def write_profile(path: Path, tests: dict[str, dict[str, Any]], wall_seconds: float | None = None,
                  workers: int = 0) -> dict[str, Any]:
    """``wall_seconds``: the session's clock time, which is what CI's limit counts; with ``workers`` (pytest-xdist
    processes, 0 for none) it is less than the tests' summed seconds."""
    rows = [{"test": name, "seconds": round(v["seconds"], 2), "slow": bool(v.get("slow")), "outcome": v["outcome"]}
            for name, v in sorted(tests.items(), key=lambda kv: -kv[1]["seconds"])]
    total = sum(r["seconds"] for r in rows)
    slow = sum(r["seconds"] for r in rows if r["slow"])
    profile = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": machine(),
               "tests": len(rows), "workers": workers,
               "seconds_wall": round(wall_seconds, 1) if wall_seconds is not None else None,
               "seconds_total": round(total, 1), "seconds_slow": round(slow, 1),
               "seconds_not_slow": round(total - slow, 1),
               "outcomes": {o: sum(r["outcome"] == o for r in rows) for o in ("passed", "failed", "skipped")},
               "by_test": rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(profile, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return profile


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, default=Path(__file__).parent / "results" / "test_durations.json")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    profile = json.loads(args.file.read_text(encoding="utf-8"))
    wall = profile.get("seconds_wall")
    print(f"{profile['tests']} tests, {profile['seconds_total'] / 60:.1f} min of test time "
          f"({profile['seconds_slow'] / 60:.1f} slow, {profile['seconds_not_slow'] / 60:.1f} not)"
          + (f", {wall / 60:.1f} min of clock time on {profile.get('workers') or 1} worker(s)" if wall else "")
          + f", on {profile['machine']['processor']} ({profile['machine']['cores']} cores)")
    for row in profile["by_test"][:args.top]:
        print(f"{row['seconds']:8.1f} s  {'slow' if row['slow'] else '    '}  {row['test']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``make smoke``'s cost: the wall time of one smoke run (every stage on ``infra/smoke/profile.yaml`` in a scratch
copy), its stages' own seconds as DVC ran them, and the processor it ran on (native bfloat16 or not: the
training steps are fp32 without it). Target: at most 5 minutes on two cores. Reference in the same run: the
per-stage overhead, the time between one stage's end and the next one's start (DVC and the stage process).

    .venv/bin/python -m benchmarks.smoke_time
"""

from __future__ import annotations

import argparse
import re
import time
from datetime import datetime

from benchmarks._common import write_result
from pipeline.experiments.smoke import smoke

TARGET_S = 300.0
_STAMP = re.compile(r"^(\d\d:\d\d:\d\d\.\d+) \|.*Flow run '([^']+)' - (Beginning flow run|Finished in state)")


def bf16_native() -> bool:
    try:
        return "avx512_bf16" in open("/proc/cpuinfo", encoding="utf-8").read()
    except OSError:
        return False


def stage_seconds(log: str) -> tuple[dict[str, float], list[float]]:
    """Each stage's seconds inside its flow run, and the gaps between runs, from the run's console."""
    begun, seconds, gaps, last_end = {}, {}, [], None
    for line in log.splitlines():
        m = _STAMP.match(line)
        if not m:
            continue
        at = datetime.strptime(m.group(1), "%H:%M:%S.%f")
        if m.group(3).startswith("Beginning"):
            begun[m.group(2)] = at
            if last_end is not None:
                gaps.append((at - last_end).total_seconds())
        elif m.group(2) in begun:
            seconds[m.group(2)] = round((at - begun[m.group(2)]).total_seconds(), 1)
            last_end = at
    return seconds, gaps


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    lines: list[str] = []
    started = time.monotonic()
    smoke(keep=False, echo=lines.append, log_sink=(log := []))
    wall = time.monotonic() - started
    seconds, gaps = stage_seconds("".join(log))
    slowest = dict(sorted(seconds.items(), key=lambda kv: -kv[1])[:10])
    write_result("smoke_time", {
        "seconds_wall": round(wall, 1), "target_s": TARGET_S, "within_target": wall <= TARGET_S,
        "native_bf16": bf16_native(), "stages": len(seconds), "seconds_in_stages": round(sum(seconds.values()), 1),
        "seconds_between_stages_median": round(sorted(gaps)[len(gaps) // 2], 1) if gaps else None,
        "slowest_stages": slowest, "tracks": [line for line in lines if not line.startswith("smoke:")]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

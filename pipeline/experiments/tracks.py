"""``python -m pipeline.experiments.tracks``: every track, its eval sets with their sizes, and the systems,
baselines and controls scored on each, as ``compare`` last paired them (``reports/compare.json``).

One place a new user learns what the pipeline evaluates and on how much: per eval set, the questions and the
units its intervals resample (articles, texts or questions), then the trained systems (with their runs) and what
each is set beside. It reads the report the last ``compare`` wrote, so it shows what this workspace holds.

    python -m pipeline.experiments.tracks [--report reports/compare.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def summarise(report: dict[str, Any]) -> list[str]:
    evals: dict[tuple[str, str], dict[str, Any]] = {}
    for pair in report.get("pairs", []):
        entry = evals.setdefault((pair["track"], pair["eval"]), {"questions": 0, "units": 0, "unit": pair.get("unit"),
                                                                  "systems": {}, "figures": []})
        entry["questions"] = max(entry["questions"], int(pair.get("questions") or 0))
        entry["units"] = max(entry["units"], int(pair.get("units") or 0))
        rivals = entry["systems"].setdefault(pair["system"], {"runs": pair.get("seeds"), "against": []})
        if pair["baseline"] not in rivals["against"]:
            rivals["against"].append(pair["baseline"])
        if pair["figure"] not in entry["figures"]:
            entry["figures"].append(pair["figure"])
    lines, track = [], None
    for (name, eval_set), entry in evals.items():
        if name != track:
            lines.append(name)
            track = name
        within = "" if entry["unit"] == "question" else f" in {entry['units']:,} {entry['unit']}s"
        lines.append(f"  {eval_set}: {entry['questions']:,} questions{within} (intervals resample {entry['unit']}s); "
                     f"figures: {', '.join(entry['figures'])}")
        for system, rivals in entry["systems"].items():
            n = rivals["runs"]
            runs = f"{n} runs" if n and n > 1 else "1 run"
            lines.append(f"    {system} ({runs}) against {', '.join(rivals['against'])}")
    return lines


def main(argv: list[str] | None = None) -> int:
    from pipeline.common.layout import PATHS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", type=Path, default=PATHS.compare.report)
    args = ap.parse_args(argv)
    try:
        report = json.loads(args.report.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(f"{args.report} is missing: `dvc repro compare` (or `make smoke`, `make repro`) writes it",
              file=sys.stderr)
        return 2
    print("\n".join(summarise(report)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where each committed GPU result came from: the commit it names, whether that commit is in this repository,
and whether it records the sha256 of its per-question predictions.

A GPU figure can be checked only if a reader can get the code that made it (a commit here, or the branch
``make gpu-import`` creates) and the predictions it scored (their digests, so the import is the same bytes).
Results from before the node recorded both are listed in ``LEGACY`` with what they lack; the docs show them
with that said, and a new result without both fails ``--check`` (``tests/test_gpu_provenance.py``).

    python -m benchmarks.gpu_provenance [--check]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# results made before their provenance was recorded, and what each lacks; nothing may be added here
LEGACY = {
    "gpu_profile.json": "no source commit, no prediction digests (the node recorded neither yet)",
    "gpu_strategyqa_search.json": "no source commit, no prediction digests (a search over budgets, read back "
                                  "from a node log)",
    "gpu_training_check.json": "no source commit, no prediction digests (a resume-equality check: weights, not "
                               "predictions)",
    "gpu_nlquad_h200.json": "no prediction digests (its commit f229b57 is here)",
    "gpu_strategyqa_cv_h200.json": "its commit 581fe6a is not in this repository (built from a local branch never "
                                   "pushed); no prediction digests. Superseded by gpu_strategyqa_cv_h100.json",
}


def _has_digests(value: Any) -> bool:
    if isinstance(value, dict):
        return any((k.endswith("predictions_sha256") and v) or _has_digests(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_digests(v) for v in value)
    return False


def commit_here(commit: str | None, root: Path = ROOT) -> bool:
    if not commit or not all(c in "0123456789abcdef" for c in commit) or not 7 <= len(commit) <= 40:
        return False
    return subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=root,
                          capture_output=True).returncode == 0


def provenance(path: Path, root: Path = ROOT) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    source = data.get("source") if isinstance(data.get("source"), dict) else {}
    commit = source.get("commit")
    return {"file": path.name, "device": data.get("device"), "commit": commit,
            "commit_in_repository": commit_here(commit, root), "prediction_digests": _has_digests(data)}


def table(results: Path = RESULTS, root: Path = ROOT) -> list[dict[str, Any]]:
    return [provenance(p, root) for p in sorted(results.glob("gpu_*.json"))]


def problems(rows: list[dict[str, Any]]) -> list[str]:
    """Results lacking a commit here or prediction digests and not listed as legacy; legacy entries that have
    since gained both (their note would then be wrong) or no longer exist."""
    out = []
    for row in rows:
        whole = row["commit_in_repository"] and row["prediction_digests"]
        if not whole and row["file"] not in LEGACY:
            out.append(f"{row['file']}: " + ", ".join(
                what for what, ok in (("no commit in this repository", row["commit_in_repository"]),
                                      ("no prediction digests", row["prediction_digests"])) if not ok))
        if whole and row["file"] in LEGACY:
            out.append(f"{row['file']}: listed as legacy but has a commit here and digests; drop it from LEGACY")
    names = {row["file"] for row in rows}
    out += [f"{name}: listed as legacy but not in {RESULTS.name}/" for name in LEGACY if name not in names]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a result lacks provenance and is not legacy")
    args = ap.parse_args(argv)
    rows = table()
    for row in rows:
        state = "complete" if row["commit_in_repository"] and row["prediction_digests"] else LEGACY.get(
            row["file"], "INCOMPLETE")
        print(f"{row['file']:<34} {str(row['device'])[:24]:<24} {str(row['commit'])[:10]:<10}  {state}")
    found = problems(rows)
    for line in found:
        print(line)
    return 1 if (args.check and found) else 0


if __name__ == "__main__":
    raise SystemExit(main())

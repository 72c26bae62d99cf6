"""A rebuild as a processor without native bfloat16 makes it, on this machine: the trained stages whose figures
``benchmarks/expected.yaml`` pins over seeds (and the StrategyQA ones it pins with a stated tolerance), rebuilt
in a worktree of HEAD with ``precision: fp32`` (what ``precision: auto`` takes where the processor has no
AVX512-BF16 or AMX) and torch, oneDNN and MKL held to AVX2 kernels (``ATEN_CPU_CAPABILITY=avx2``,
``ONEDNN_MAX_CPU_ISA=AVX2``, ``MKL_ENABLE_INSTRUCTIONS=AVX2``: the kernels an AVX2-only processor runs), then
``benchmarks.expected`` read on that worktree, and ``compare`` rerun there: every verdict of a pair with a rebuilt
system (the others' inputs are the committed ones) against the committed verdict. The reference in the same
run: the committed (bf16) figures and verdicts.

How it differs from a real such processor: the same silicon, so the instruction set is held back but not its
rounding of anything outside torch's kernels; it checks that a run in fp32 on AVX2 kernels lands within the
tolerances the seeds imply, which is what a user without bf16 meets.

    .venv/bin/python -m benchmarks.no_bf16_rebuild [--worktree /tmp/qa-no-bf16/main] [--check-only --note TEXT]

The worktree shares this checkout's DVC cache (hard links), so only the listed stages run; a cut run resumes
(DVC skips what finished, a training stage resumes from its checkpoint). Hours on two cores: fp32 steps are
1.4-2x the bf16 ones (``benchmarks/results/training_precision_cpu.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common import write_result
from benchmarks.stage_seconds import _cpu
from benchmarks.expected import EXPECTED, check_row, load_rows, pinned_tolerance
from pipeline.common.layout import PATHS

REPO = Path(__file__).resolve().parents[1]
AVX2_ONLY = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
PRECISION = re.compile(r"^(  precision: )auto\b", re.M)


def trained_rows(rows: list[dict]) -> list[dict]:
    """The rows a training stage makes (their command evaluates a trained model): pinned, or a paper's figure."""
    return [r for r in rows if r["command"].split()[-1].startswith("evaluate_")]


def as_without_bf16(params_text: str) -> str:
    """params.yaml with every ``precision: auto`` read as a processor without native bf16 reads it."""
    return PRECISION.sub(r"\1fp32", params_text)


def pair_key(pair: dict) -> str:
    return f"{pair['eval']} {pair['system']} vs {pair['baseline']} {pair['figure']}"


def verdict_changes(rebuilt: dict, committed: dict, systems: set[str]) -> tuple[int, list[dict]]:
    """(pairs with a rebuilt system or baseline, those whose verdict differs from the committed one)."""
    before = {pair_key(p): p for p in committed["pairs"]}
    mine = [p for p in rebuilt["pairs"] if p["system"] in systems or p["baseline"] in systems]
    return len(mine), [{"pair": pair_key(p), "committed": before[pair_key(p)]["verdict"], "rebuilt": p["verdict"],
                        "difference": p["difference"], "ci95": p["ci95"]}
                       for p in mine if pair_key(p) in before and before[pair_key(p)]["verdict"] != p["verdict"]]


def prepare(worktree: Path) -> None:
    if not (worktree / ".git").exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), "HEAD"], cwd=REPO, check=True)
    dvc = [str(Path(sys.executable).with_name("dvc"))]
    subprocess.run(dvc + ["cache", "dir", "--local", str(REPO / ".dvc" / "cache")], cwd=worktree, check=True)
    subprocess.run(dvc + ["config", "--local", "cache.type", "hardlink,copy"], cwd=worktree, check=True)
    shared = worktree.parent / "shared"
    if not shared.exists():  # the stages read ../shared beside the checkout
        shared.symlink_to((REPO.parent / "shared").resolve())
    subprocess.run(dvc + ["checkout", "-q"], cwd=worktree, check=False)  # what it cannot check out, repro makes
    params = worktree / "params.yaml"
    params.write_text(as_without_bf16(params.read_text(encoding="utf-8")), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.no_bf16_rebuild", description=__doc__.split("\n")[0])
    ap.add_argument("--worktree", type=Path, default=Path("/tmp/qa-no-bf16/main"))
    ap.add_argument("--check-only", action="store_true",
                    help="the listed stages already ran in the worktree: rerun compare there and read the figures")
    ap.add_argument("--note", default="", help="what the run was (its time, when it was cut and resumed)")
    args = ap.parse_args(argv)
    rows = trained_rows(load_rows(EXPECTED))
    stages = sorted({r["command"].split()[-1] for r in rows})
    started = time.monotonic()
    env = dict(os.environ, **AVX2_ONLY, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    if not args.check_only:
        args.worktree.parent.mkdir(parents=True, exist_ok=True)
        prepare(args.worktree)
        subprocess.run(["dvc", "repro", *stages], cwd=args.worktree, env=env, check=True)
    subprocess.run(["dvc", "repro", "--single-item", "compare"], cwd=args.worktree, env=env, check=True)
    checked = [(r, check_row(r, args.worktree), check_row(r, REPO)) for r in rows]
    compare = PATHS.compare.report
    pairs, changed = verdict_changes(json.loads((args.worktree / compare).read_text(encoding="utf-8")),
                                     json.loads((REPO / compare).read_text(encoding="utf-8")),
                                     {Path(r["file"]).stem for r in rows})
    write_result("no_bf16_rebuild", {
        "what": "the trained pinned figures rebuilt in fp32 on AVX2 kernels, read by benchmarks.expected",
        "note": args.note, "cpu": _cpu(),
        "env": AVX2_ONLY, "precision": "fp32", "stages": stages,
        "seconds": round(time.monotonic() - started) if not args.check_only else None,
        "rows": [{"id": r["id"], "rebuilt": c.value, "committed": ref.value,
                  "pinned": r["pinned"]["value"] if "pinned" in r else None,
                  "tolerance": pinned_tolerance(r["pinned"]) if "pinned" in r else None,
                  "paper": c.paper, "ok": not c.failed} for r, c, ref in checked],
        "all_ok": not any(c.failed for _, c, _ in checked),
        "pairs_with_a_rebuilt_system": pairs, "verdicts_changed": changed,
    })
    return 0 if all(not c.failed for _, c, _ in checked) else 1


if __name__ == "__main__":
    raise SystemExit(main())

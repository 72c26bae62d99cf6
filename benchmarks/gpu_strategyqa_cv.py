"""StrategyQA with and without the auxiliary BoolQ model, cross-validated on the same folds: a node run read back.

The node side is ``infra/training/node-strategyqa-cv.sh``: ``cv_aux.tar.gz`` (the auxiliary BoolQ model, then
``strategyqa_cv`` started from it) and ``cv_base.tar.gz`` (``strategyqa_cv`` again from the base model, on the
same folds), each with the node's ``*.profile.json``. This reads the two archives and writes one result: the
auxiliary model's own BoolQ figures (held-out articles, against its majority, with its dev curve), each run's
out-of-fold accuracy per setting against each fold's majority, and per setting in both runs the auxiliary start
against the base start on the same questions, paired by question (the unit StrategyQA sampled); with the commit
and params hash the bundle was built from and the sha256 of both runs' per-question predictions, so the figures
can be traced to a revision and checked against the predictions they came from.

With ``--seed-run OUT2`` (repeatable): node runs of the auxiliary phase alone (``PHASES=aux``) from the same bundle
with another ``strategyqa_qa.seed``; every setting is then also reported over the seeds (per seed, mean and SD,
intervals over seeds and questions).

    python -m benchmarks.gpu_strategyqa_cv OUT [--seed-run OUT2 ...] [--name gpu_strategyqa_cv_h100]
                                           [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from benchmarks._common import dvclive_series, write_result
from pipeline.common.layout import PATHS
from pipeline.common.manifest import source_path
from pipeline.common.paired import paired_difference
from pipeline.common.paired_seeds import paired_difference_over_seeds
from pipeline.strategyqa.data import load_questions
from pipeline.strategyqa.folds import labelled_pool

MAX_MEMBER_BYTES = 64 * 2**20  # a member larger than this is not one the node writes for these stages
RUNS = ("cv_aux", "cv_base")


class ArchiveError(ValueError):
    pass


def read_members(archive: Path, names: tuple[str, ...]) -> dict[str, bytes]:
    """The named regular files of a node archive (others are not read); a missing one or an oversized one is an
    error naming it."""
    out: dict[str, bytes] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for name in names:
            try:
                member = tar.getmember(name)
            except KeyError:
                raise ArchiveError(f"{archive}: no {name} (is it the node's {archive.stem} archive?)") from None
            if not member.isfile() or member.size > MAX_MEMBER_BYTES:
                raise ArchiveError(f"{archive}: {name} is not a plain file under {MAX_MEMBER_BYTES} bytes")
            out[name] = tar.extractfile(member).read()
    return out


def read_run(archive: Path, with_boolq: bool) -> dict[str, Any]:
    names = ("params.yaml", PATHS.strategyqa_cv.report.as_posix(), PATHS.strategyqa_cv.predictions.as_posix())
    if with_boolq:
        names += (PATHS.boolq_aux.report.as_posix(),
                  (PATHS.boolq_aux.live / "plots" / "metrics" / "dev" / "accuracy.tsv").as_posix())
    files = read_members(archive, names)
    profile_file = archive.with_name(f"{archive.name.removesuffix('.tar.gz')}.profile.json")
    profile = json.loads(profile_file.read_text(encoding="utf-8")) if profile_file.exists() else {}
    run = {
        "params": yaml.safe_load(files["params.yaml"]),
        "report": json.loads(files[names[1]]),
        "predictions": json.loads(files[names[2]]),
        "predictions_sha256": hashlib.sha256(files[names[2]]).hexdigest(),
        "profile": profile,
    }
    if with_boolq:
        run["boolq"] = json.loads(files[names[3]])
        run["boolq_dev_curve"] = [[step, round(v, 2)] for step, v in dvclive_series(files[names[4]])]
    if run["report"].get("folds", 0) < 2:
        raise ArchiveError(f"{archive}: strategyqa_cv did not run (folds: {run['report'].get('folds')})")
    return run


def aux_versus_base(aux: dict[str, Any], base: dict[str, Any], gold: dict[str, bool]) -> dict[str, dict]:
    """Per setting in both runs: the auxiliary start against the base start, paired by question. Refused when the
    two runs did not put every question in the same fold (then they are not the same experiment)."""
    out = {}
    for setting in sorted(set(aux["predictions"]) & set(base["predictions"])):
        a, b = aux["predictions"][setting], base["predictions"][setting]
        if set(a) != set(b):
            raise ArchiveError(f"{setting}: the two runs answered different questions")
        moved = [q for q in a if a[q]["fold"] != b[q]["fold"]]
        if moved:
            raise ArchiveError(f"{setting}: {len(moved)} question(s) sit in another fold in the base run, e.g. "
                               f"{moved[0]} (strategyqa_cv.folds and seed must match)")
        ids = sorted(a)
        out[setting] = paired_difference([float(a[q]["answer"] == gold[q]) for q in ids],
                                         [float(b[q]["answer"] == gold[q]) for q in ids])
    return out


def _settings(report: dict[str, Any]) -> dict[str, dict]:
    keep = ("paper_setting", "questions", "accuracy", "majority_baseline", "predicted_yes_share", "versus_majority",
            "versus_question_only")
    return {s: {k: v[k] for k in keep if k in v} | {"best_steps": [f["best_step"] for f in v["folds"]]}
            for s, v in report["settings"].items()}


def fold_launches(out_dir: Path, run: str) -> list[dict[str, Any]]:
    """The node's parallel fold launches of one run (``JOBS=N``: ``RUN.folds.<time>.json``, one per launch; a
    resumed run has several), each as jobs, wall seconds and folds trained; [] when the folds trained in the
    stage's own sequence."""
    out = []
    for path in sorted(out_dir.glob(f"{run}.folds.*.json")):
        if path.stat().st_size > MAX_MEMBER_BYTES:
            raise ArchiveError(f"{path}: over {MAX_MEMBER_BYTES} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
        trained = data.get("trained") if isinstance(data, dict) else None
        if not isinstance(trained, list) or not isinstance(data.get("jobs"), int):
            raise ArchiveError(f"{path}: not a fold launch record (jobs, trained)")
        out.append({"jobs": data["jobs"], "wall_seconds": data.get("wall_seconds"), "folds_trained": len(trained),
                    "fold_seconds_sum": round(sum(float(f.get("seconds", 0)) for f in trained), 1)})
    return out


def labelled_answers() -> dict[str, bool]:
    """Every labelled StrategyQA question's answer (train and dev: what strategyqa_cv cross-validates)."""
    pool = labelled_pool(load_questions(source_path("strategyqa_train")), load_questions(source_path("strategyqa_eval")))
    return {q.qid: bool(q.answer) for q in pool}


def summarise(out_dir: Path, gold: dict[str, bool]) -> dict[str, Any]:
    """The node's OUT folder -> the result (``cv_base.tar.gz`` is optional: without it, no comparison)."""
    aux = read_run(out_dir / "cv_aux.tar.gz", with_boolq=True)
    base_file = out_dir / "cv_base.tar.gz"
    base = read_run(base_file, with_boolq=False) if base_file.exists() else None
    boolq = aux["boolq"]
    result: dict[str, Any] = {
        "device": aux["profile"].get("device"), "torch": aux["profile"].get("torch"),
        "transformers": aux["profile"].get("transformers"), "source": aux["profile"].get("source"),
        "node_command": "bash node-strategyqa-cv.sh OUT [SETTING ...]",
        "seconds": {run: {s: e.get("seconds") for s, e in r["profile"].get("stages", {}).items()}
                    for run, r in (("cv_aux", aux), ("cv_base", base)) if r is not None},
        "parallel_folds": {run: launches for run in RUNS if (launches := fold_launches(out_dir, run))},
        "boolq_aux": {k: boolq[k] for k in ("accuracy", "majority_baseline", "predicted_yes_share", "versus_majority",
                                            "train_questions", "dev_questions", "heldout_questions", "best_step",
                                            "steps", "max_seq_len") if k in boolq}
                     | {"params": aux["params"]["boolq_aux"], "dev_curve": aux["boolq_dev_curve"]},
        "strategyqa_cv": {"folds": aux["report"]["folds"], "seed": aux["report"]["seed"],
                          "labelled_questions": aux["report"]["labelled_questions"],
                          "budget": {k: aux["params"]["strategyqa_qa"][k] for k in
                                     ("max_seq_len", "batch_size", "learning_rate", "max_steps", "patience")},
                          "from_boolq_aux": _settings(aux["report"]),
                          "from_base": _settings(base["report"]) if base else None},
        "predictions_sha256": {run: r["predictions_sha256"] for run, r in (("cv_aux", aux), ("cv_base", base))
                               if r is not None},
        "unit": "question",
    }
    if base is not None:
        if aux["report"]["start"] == base["report"]["start"]:
            raise ArchiveError(f"both runs started from {aux['report']['start']}: cv_base must start from the base model")
        result["aux_versus_base"] = aux_versus_base(aux, base, gold)
    return result


def _majority_by_question(run: dict[str, Any], setting: str) -> dict[str, bool]:
    folds = run["report"]["settings"][setting]["folds"]
    return {q: bool(folds[a["fold"]]["majority"]) for q, a in run["predictions"][setting].items()}


def over_seeds(runs: list[dict[str, Any]], gold: dict[str, bool]) -> dict[str, Any]:
    """The auxiliary-start runs of several ``strategyqa_qa.seed`` values (the first run's and each ``--seed-run``'s)
    on the same folds: per setting the accuracy of each seed, their mean and SD, and the setting against each
    fold's majority answer and against question-only, paired by question, with an interval over seeds and
    questions (:func:`pipeline.common.paired_seeds.paired_difference_over_seeds`). Refused when the runs differ in
    anything but the seed, repeat a seed, or put a question in another fold."""
    def without_seed(params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "strategyqa_qa": {k: v for k, v in params["strategyqa_qa"].items() if k != "seed"}}

    seeds = [r["params"]["strategyqa_qa"]["seed"] for r in runs]
    if len(set(seeds)) != len(seeds):
        raise ArchiveError(f"the seed runs repeat a strategyqa_qa.seed: {seeds}")
    for r, seed in zip(runs[1:], seeds[1:], strict=True):
        if without_seed(r["params"]) != without_seed(runs[0]["params"]):
            raise ArchiveError(f"the run with strategyqa_qa.seed {seed} differs from the first in more than the seed")
    settings = [s for s in runs[0]["predictions"] if all(s in r["predictions"] for r in runs)]
    out: dict[str, Any] = {}
    for setting in settings:
        ids = sorted(runs[0]["predictions"][setting])
        for r, seed in zip(runs, seeds, strict=True):
            p = r["predictions"][setting]
            if sorted(p) != ids or any(p[q]["fold"] != runs[0]["predictions"][setting][q]["fold"] for q in ids):
                raise ArchiveError(f"{setting}: the run with strategyqa_qa.seed {seed} put questions in other folds")
        right = [[float(r["predictions"][setting][q]["answer"] == gold[q]) for q in ids] for r in runs]
        majority = [[float(m[q] == gold[q]) for q in ids] for m in (_majority_by_question(r, setting) for r in runs)]
        accuracy = [round(100 * sum(row) / len(row), 2) for row in right]
        entry = {"accuracy_per_seed": accuracy, "accuracy_mean": round(float(np.mean(accuracy)), 2),
                 "accuracy_sd": round(float(np.std(accuracy, ddof=1)), 2) if len(accuracy) > 1 else None,
                 "questions": len(ids), "versus_majority": paired_difference_over_seeds(right, majority)}
        if setting != "question_only" and "question_only" in settings:
            shared = [q for q in ids if q in runs[0]["predictions"]["question_only"]]
            entry["versus_question_only"] = paired_difference_over_seeds(
                [[float(r["predictions"][setting][q]["answer"] == gold[q]) for q in shared] for r in runs],
                [[float(r["predictions"]["question_only"][q]["answer"] == gold[q]) for q in shared] for r in runs])
        out[setting] = entry
    return {"strategyqa_qa.seed": seeds, "start": runs[0]["report"]["start"], "settings": out,
            "predictions_sha256": [r["predictions_sha256"] for r in runs]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path, help="the node's OUT folder (cv_aux.tar.gz, cv_base.tar.gz, *.profile.json)")
    ap.add_argument("--seed-run", type=Path, action="append", default=[],
                    help="another node OUT folder (cv_aux.tar.gz) from the same bundle with another strategyqa_qa.seed: "
                         "the auxiliary-start settings are then reported over every seed")
    ap.add_argument("--name", default="gpu_strategyqa_cv")
    ap.add_argument("--results-dir", type=Path, help="where <name>.json goes (default: benchmarks/results)")
    args = ap.parse_args(argv)
    try:
        gold = labelled_answers()
        result = summarise(args.out_dir, gold)
        if args.seed_run:
            runs = [read_run(d / "cv_aux.tar.gz", with_boolq=False) for d in [args.out_dir, *args.seed_run]]
            result["over_seeds"] = over_seeds(runs, gold)
            result["seed_runs"] = {str(r["params"]["strategyqa_qa"]["seed"]): {
                "source": r["profile"].get("source"), "device": r["profile"].get("device"),
                "parallel_folds": fold_launches(d, "cv_aux")} for r, d in zip(runs, [args.out_dir, *args.seed_run],
                                                                              strict=True)}
    except (ArchiveError, OSError, tarfile.TarError) as exc:
        raise SystemExit(f"gpu_strategyqa_cv: {exc}") from None
    write_result(args.name, result, args.results_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

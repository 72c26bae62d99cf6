"""benchmarks.gpu_strategyqa_cv: the node's two cross-validation runs (from the auxiliary BoolQ model, from the
base model) read back as one result, the two starts paired by question on the same folds."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from benchmarks.gpu_strategyqa_cv import ArchiveError, summarise

GOLD = {"a": True, "b": False, "c": True, "d": False, "e": True, "f": False}


def _report(start: str, settings: list[str]) -> dict:
    folds = [{"best_step": 30}, {"best_step": 60}]
    return {"folds": 2, "seed": 13, "labelled_questions": len(GOLD), "start": start, "unit": "question",
            "settings": {s: {"paper_setting": s, "questions": len(GOLD), "accuracy": 50.0, "majority_baseline": 50.0,
                             "folds": folds} for s in settings}}


def _write(path: Path, files: dict[str, str | bytes], profile: dict | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text if isinstance(text, bytes) else text.encode()
            member = tarfile.TarInfo(name)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    if profile is not None:
        path.with_name(path.name.removesuffix(".tar.gz") + ".profile.json").write_text(json.dumps(profile))
    return path


def _predictions(answers: dict[str, bool], folds: dict[str, int] | None = None) -> str:
    folds = folds or {q: i % 2 for i, q in enumerate(GOLD)}
    return json.dumps({"question_only": {q: {"fold": folds[q], "answer": a, "logits": [0.0, 0.0]}
                                         for q, a in answers.items()}})


def _aux(out: Path, answers: dict[str, bool]) -> None:
    _write(out / "cv_aux.tar.gz", {
        "params.yaml": "boolq_aux:\n  max_steps: 4\nstrategyqa_qa:\n  max_seq_len: 512\n  batch_size: 32\n"
                       "  learning_rate: 5.0e-05\n  max_steps: 6\n  patience: 5\n  start_from: boolq_aux\n",
        "reports/strategyqa_cv.json": json.dumps(_report("models/boolq_aux/final", ["question_only"])),
        "data/predictions/strategyqa_cv.json": _predictions(answers),
        "reports/boolq_aux.json": json.dumps({"accuracy": 61.0, "majority_baseline": 60.0,
                                              "predicted_yes_share": 0.9, "best_step": 4}),
        "dvclive/boolq_aux/plots/metrics/dev/accuracy.tsv": "step\taccuracy\n2\t60.0\n4\t61.0\n",
    }, {"device": "NVIDIA H100", "source": {"commit": "abc", "params_sha256": "0" * 64},
        "stages": {"train_boolq_aux": {"seconds": 5.0}, "strategyqa_cv": {"seconds": 9.0}}})


def _base(out: Path, answers: dict[str, bool], start: str = "start_model", folds: dict[str, int] | None = None) -> None:
    _write(out / "cv_base.tar.gz", {
        "params.yaml": "strategyqa_qa:\n  start_from: base\n",
        "reports/strategyqa_cv.json": json.dumps(_report(start, ["question_only"])),
        "data/predictions/strategyqa_cv.json": _predictions(answers, folds),
    }, {"device": "NVIDIA H100", "stages": {"strategyqa_cv": {"seconds": 8.0}}})


def test_the_two_starts_are_paired_by_question_on_the_same_folds(tmp_path):
    _aux(tmp_path, dict(GOLD))  # the auxiliary start: all six right
    _base(tmp_path, {**GOLD, "a": False, "b": True})  # the base start: four right
    result = summarise(tmp_path, GOLD)
    paired = result["aux_versus_base"]["question_only"]
    assert paired["system_mean"] == 100.0 and round(paired["baseline_mean"], 2) == 66.67
    assert paired["wins"] == 2 and paired["losses"] == 0 and paired["questions"] == 6
    assert result["device"] == "NVIDIA H100" and result["source"]["commit"] == "abc"
    assert result["boolq_aux"]["dev_curve"] == [[2, 60.0], [4, 61.0]]
    assert result["boolq_aux"]["params"] == {"max_steps": 4}
    assert result["strategyqa_cv"]["from_boolq_aux"]["question_only"]["best_steps"] == [30, 60]
    assert result["seconds"] == {"cv_aux": {"train_boolq_aux": 5.0, "strategyqa_cv": 9.0},
                                 "cv_base": {"strategyqa_cv": 8.0}}
    assert set(result["predictions_sha256"]) == {"cv_aux", "cv_base"}


def test_without_the_base_run_there_is_no_comparison(tmp_path):
    _aux(tmp_path, dict(GOLD))
    result = summarise(tmp_path, GOLD)
    assert "aux_versus_base" not in result and result["strategyqa_cv"]["from_base"] is None


def test_runs_on_other_folds_are_not_compared(tmp_path):
    _aux(tmp_path, dict(GOLD))
    _base(tmp_path, dict(GOLD), folds={q: 0 if q == "a" else 1 for q in GOLD})
    with pytest.raises(ArchiveError, match="another fold"):
        summarise(tmp_path, GOLD)


def test_a_base_run_from_the_auxiliary_model_is_refused(tmp_path):
    _aux(tmp_path, dict(GOLD))
    _base(tmp_path, dict(GOLD), start="models/boolq_aux/final")
    with pytest.raises(ArchiveError, match="must start from the base model"):
        summarise(tmp_path, GOLD)


def test_an_archive_without_the_cross_validation_names_what_is_missing(tmp_path):
    _write(tmp_path / "cv_aux.tar.gz", {"params.yaml": "{}\n"})
    with pytest.raises(ArchiveError, match="no reports/strategyqa_cv.json"):
        summarise(tmp_path, GOLD)


def _seed_run(out: Path, seed: int, answers: dict[str, bool], folds: dict[str, int] | None = None,
              lr: str = "5.0e-05") -> Path:
    out.mkdir(parents=True, exist_ok=True)
    report = _report("models/boolq_aux/final", ["question_only"])
    report["settings"]["question_only"]["folds"] = [{"best_step": 30, "majority": 0}, {"best_step": 60, "majority": 1}]
    _write(out / "cv_aux.tar.gz", {
        "params.yaml": f"strategyqa_qa:\n  seed: {seed}\n  learning_rate: {lr}\n  start_from: boolq_aux\n",
        "reports/strategyqa_cv.json": json.dumps(report),
        "data/predictions/strategyqa_cv.json": _predictions(answers, folds),
    }, {"device": "NVIDIA H100"})
    return out


def test_seed_runs_are_reported_over_seeds_and_refused_when_they_differ_in_more(tmp_path):
    from benchmarks.gpu_strategyqa_cv import over_seeds, read_run

    wrong_two = {**GOLD, "a": False, "c": False}
    dirs = [_seed_run(tmp_path / "s42", 42, dict(GOLD)), _seed_run(tmp_path / "s43", 43, wrong_two),
            _seed_run(tmp_path / "s44", 44, dict(GOLD))]
    runs = [read_run(d / "cv_aux.tar.gz", with_boolq=False) for d in dirs]
    result = over_seeds(runs, GOLD)
    entry = result["settings"]["question_only"]
    assert result["strategyqa_qa.seed"] == [42, 43, 44]
    assert entry["accuracy_per_seed"] == [100.0, 66.67, 100.0] and entry["accuracy_mean"] == 88.89
    # fold 0 holds a, c, e (all "yes") and its majority is "no"; fold 1 b, d, f (all "no"), majority "yes": the
    # per-fold majority answer is wrong on every question, so each seed's difference is its accuracy
    assert entry["versus_majority"]["baseline_mean"] == 0.0
    assert entry["versus_majority"]["seeds"] == 3 and entry["versus_majority"]["per_seed_difference"] == [100.0, 66.67, 100.0]
    with pytest.raises(ArchiveError, match="repeat"):
        over_seeds([runs[0], runs[0]], GOLD)
    other_lr = read_run(_seed_run(tmp_path / "lr", 45, dict(GOLD), lr="1.0e-04") / "cv_aux.tar.gz", with_boolq=False)
    with pytest.raises(ArchiveError, match="more than the seed"):
        over_seeds([runs[0], other_lr], GOLD)
    moved = read_run(_seed_run(tmp_path / "moved", 46, dict(GOLD), folds={q: 0 for q in GOLD}) / "cv_aux.tar.gz",
                     with_boolq=False)
    with pytest.raises(ArchiveError, match="other folds"):
        over_seeds([runs[0], moved], GOLD)


def test_fold_launch_records_are_read_and_a_malformed_one_named(tmp_path):
    from benchmarks.gpu_strategyqa_cv import fold_launches

    (tmp_path / "cv_aux.folds.1.json").write_text(json.dumps(
        {"jobs": 4, "wall_seconds": 10.0, "trained": [{"setting": "ir_q", "fold": 0, "seconds": 6.0},
                                                      {"setting": "ir_q", "fold": 1, "seconds": 7.5}]}))
    assert fold_launches(tmp_path, "cv_aux") == [{"jobs": 4, "wall_seconds": 10.0, "folds_trained": 2,
                                                  "fold_seconds_sum": 13.5}]
    assert fold_launches(tmp_path, "cv_base") == []
    (tmp_path / "cv_base.folds.2.json").write_text(json.dumps({"jobs": "4"}))
    with pytest.raises(ArchiveError, match="cv_base.folds.2.json: not a fold launch record"):
        fold_launches(tmp_path, "cv_base")


def test_fold_claims_go_to_one_worker_each(tmp_path):
    from pipeline.offline.cv_folds import claim, pairs

    assert pairs(["question_only", "ir_q"], 2) == [("question_only", 0), ("question_only", 1), ("ir_q", 0), ("ir_q", 1)]
    assert claim(tmp_path, "ir_q", 0) is True
    assert claim(tmp_path, "ir_q", 0) is False  # a second worker finds it taken
    assert claim(tmp_path, "ir_q", 1) is True

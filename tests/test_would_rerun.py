"""`python -m pipeline.experiments.would_rerun -S ...`: the stages an experiment would rerun, printed before
it starts (DVC 3.67's `dvc exp run --dry` runs in a copy without outputs, where every stage looks new)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline.experiments.sweep import SweepError
from pipeline.experiments.would_rerun import plan


def test_a_quail_heuristic_param_reruns_its_stage_then_what_reads_it(repo):
    result = plan(repo, {"quail.pmi_window": 5}, with_status=False)
    assert result["direct"] == ["quail_baselines"]
    assert "difficulty" in result["downstream"] and "wiki_paragraphs" not in result["downstream"]


def test_a_training_budget_reruns_training_then_prediction_and_scoring(repo):
    result = plan(repo, {"span_window.max_steps": 20}, with_status=False)
    assert result["direct"] == ["train_span", "model_cards"]  # the card shows the settings it was trained with
    # the paired comparisons too, and the controls and findings read from the span model's predictions
    assert result["downstream"] == ["predict_span", "predict_span_shuffled", "evaluate_span", "compare", "nlquad_f1_iou"]


def test_a_bad_override_is_refused_before_anything(repo):
    with pytest.raises(SweepError, match="quail.nope"):
        plan(repo, {"quail.nope": 1}, with_status=False)
    with pytest.raises(SweepError, match=r"'quail.pmi_windw' is not in params.yaml \(did you mean 'quail.pmi_window'\?\)"):
        plan(repo, {"quail.pmi_windw": 5}, with_status=False)  # DVC's own refusal of it suggests a '+'
    res = subprocess.run([sys.executable, "-m", "pipeline.experiments.would_rerun", "-S", "quail.pmi_window=-3",
                          "--no-status"], cwd=repo, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "quail.pmi_window" in res.stderr
    res = subprocess.run([sys.executable, "-m", "pipeline.experiments.would_rerun", "-S", "quail.pmi_window=20",
                          "--no-status"], cwd=repo, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "quail_baselines" in res.stdout and "certainly" in res.stdout, res.stderr


def test_would_rerun_works_from_a_subfolder_and_says_so_outside_a_checkout(repo, tmp_path):
    """From a subfolder it used to end in a raw traceback."""
    inside = subprocess.run([sys.executable, "-m", "pipeline.experiments.would_rerun", "-S", "quail.pmi_window=5",
                             "--no-status"], cwd=repo / "pipeline", capture_output=True, text=True, timeout=300)
    assert inside.returncode == 0 and "quail_baselines" in inside.stdout, inside.stderr[-2000:]
    outside = subprocess.run([sys.executable, "-m", "pipeline.experiments.would_rerun", "-S", "quail.pmi_window=5"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert outside.returncode == 2 and "not inside a qa-pipeline checkout" in outside.stderr
    assert "Traceback" not in outside.stderr


def test_last_run_is_only_for_stages_that_ran_here_and_the_cost_is_counted(tmp_path, monkeypatch):
    """An output's file time is the clone's checkout time for a stage that never ran: "last run" comes from the
    stage's own note (flows.stage.record_seconds), and the cost line counts the stages and adds their times."""
    from flows.stage import record_seconds
    from pipeline.experiments.would_rerun import cost, finished_here

    (tmp_path / ".dvc" / "tmp").mkdir(parents=True)
    assert finished_here(tmp_path) == {}
    record_seconds("quail_baselines", 120.0, tmp_path / ".dvc" / "tmp" / "stage-seconds.json")
    assert set(finished_here(tmp_path)) == {"quail_baselines"}
    monkeypatch.setattr("pipeline.experiments.repro.stage_seconds",
                        lambda: {"quail_baselines": 120.0, "difficulty": 3.0})
    assert cost(["quail_baselines", "difficulty", "no_such_stage"]).startswith("3 stage(s), ")
    assert "(1 never timed)" in cost(["quail_baselines", "difficulty", "no_such_stage"])

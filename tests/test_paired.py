"""Paired comparisons: a system counts as above its baseline when the interval of the per-question difference is."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from pipeline.common.paired import paired_difference


def test_a_system_that_wins_on_most_questions_is_above_although_the_separate_intervals_overlap():
    from pipeline.common.intervals import bootstrap_ci

    rng = np.random.default_rng(1)
    baseline = rng.integers(0, 2, 200).astype(float)
    system = baseline.copy()
    flip = np.flatnonzero(baseline == 0)[:20]  # the system gets 20 more questions right, loses none
    system[flip] = 1.0
    lo_s, hi_s = bootstrap_ci(system)
    lo_b, hi_b = bootstrap_ci(baseline)
    assert lo_s < hi_b  # unpaired, the two intervals overlap ...
    result = paired_difference(system, baseline)
    assert result["above"] and result["ci95"][0] > 0  # ... paired, the difference is clear
    assert result["difference"] == pytest.approx(10.0) and (result["wins"], result["losses"]) == (20, 0)


def test_equal_systems_are_not_above_and_a_mixed_difference_straddles_zero():
    same = paired_difference([1, 0, 1, 1], [1, 0, 1, 1])
    assert same["difference"] == 0 and same["ci95"] == [0.0, 0.0] and not same["above"]
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    mixed = paired_difference(a, b)
    assert mixed["ci95"][0] < mixed["difference"] < mixed["ci95"][1]
    assert mixed == paired_difference(a, b)  # seeded: the same scores give the same interval


def test_scores_of_different_question_sets_are_refused():
    with pytest.raises(ValueError, match="one score per question"):
        paired_difference([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="no questions"):
        paired_difference([], [])


def test_every_headline_comparison_is_declared_by_the_compare_stage(repo):
    from pipeline.stages.compare import HEADLINE_PAIRS, headline_name

    stage = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]["compare"]
    declared = {next(iter(o)) for o in stage["outs"] if next(iter(o)).startswith("${paths.metrics}/")}
    written = {f"${{paths.metrics}}/{t}/{headline_name(s, b)}.json" for t, s, b in HEADLINE_PAIRS}
    assert declared == written


def test_the_readme_results_table_is_what_the_reports_say(repo):
    """Every figure of the README's results table is read from reports/compare.json, never typed."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "pipeline.experiments.results_table", "--check",
                          str(repo / "README.md")], cwd=repo, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr

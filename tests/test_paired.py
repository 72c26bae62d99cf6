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


def _clustered_example(texts: int = 24, per_text: int = 18, seed: int = 3):
    """A system that is better on some texts and worse on others, the texts' effects summing to a small gain:
    within a text its answers move together, as QuAIL's ~18 questions on one passage do."""
    rng = np.random.default_rng(seed)
    system, baseline, clusters = [], [], []
    for t in range(texts):
        shift = rng.normal(0.06, 0.25)  # this text's effect of the system over the baseline
        p_base = rng.uniform(0.3, 0.6)
        base = rng.random(per_text) < p_base
        sys_ = rng.random(per_text) < np.clip(p_base + shift, 0, 1)
        system += sys_.astype(float).tolist()
        baseline += base.astype(float).tolist()
        clusters += [f"text-{t}"] * per_text
    return system, baseline, clusters


def test_resampling_texts_widens_the_interval_past_zero_where_resampling_questions_does_not():
    from pipeline.common.paired import design_effect

    system, baseline, clusters = _clustered_example()
    by_question = paired_difference(system, baseline)
    by_text = paired_difference(system, baseline, clusters=clusters, unit="text")
    assert by_question["difference"] == by_text["difference"] > 0
    assert by_question["above"] and by_question["ci95"][0] > 0, by_question  # questions: "above" ...
    assert not by_text["above"] and by_text["ci95"][0] < 0 < by_text["ci95"][1], by_text  # ... texts: level
    assert (by_text["unit"], by_text["units"], by_text["questions"]) == ("text", 24, 432)
    assert (by_question["unit"], by_question["units"]) == ("question", 432)
    width = lambda r: r["ci95"][1] - r["ci95"][0]  # noqa: E731
    deff = design_effect([a - b for a, b in zip(system, baseline)], clusters)
    assert deff > 2 and width(by_text) > 1.3 * width(by_question)


def test_one_question_per_cluster_is_the_question_bootstrap_and_independent_clusters_cost_nothing():
    from pipeline.common.paired import design_effect

    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 2, 300).astype(float), rng.integers(0, 2, 300).astype(float)
    alone = paired_difference(a, b)
    singletons = paired_difference(a, b, clusters=[f"q{i}" for i in range(300)], unit="question")
    assert alone == singletons
    random_groups = [f"t{i % 20}" for i in rng.permutation(300)]  # clusters unrelated to the scores
    assert design_effect(a - b, random_groups) < 1.3
    same_within = [f"t{i // 10}" for i in range(300)]
    constant_per_cluster = np.repeat(rng.integers(0, 2, 30), 10).astype(float)
    assert design_effect(constant_per_cluster, same_within) == pytest.approx(10.0, rel=0.01)


def test_cluster_labels_must_match_the_questions_and_number_two_or_more():
    with pytest.raises(ValueError, match="one cluster label per question"):
        paired_difference([1, 0, 1], [0, 0, 1], clusters=["a", "b"])
    with pytest.raises(ValueError, match="at least two of them"):
        paired_difference([1, 0, 1], [0, 0, 1], clusters=["a", "a", "a"], unit="text")


def test_scores_of_different_question_sets_are_refused():
    with pytest.raises(ValueError, match="one score per question"):
        paired_difference([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="no questions"):
        paired_difference([], [])


def test_over_seeds_one_seed_above_and_the_others_not_is_no_verdict():
    """A constructed case: one training seed clearly above the baseline, two not. Each seed's
    question-resampled interval alone would call the first "above"; the two-level bootstrap (seeds and units)
    does not, and says that not every seed is above."""
    import numpy as np

    from pipeline.common.paired import paired_difference
    from pipeline.common.paired_seeds import paired_difference_over_seeds

    rng = np.random.default_rng(1)
    baseline = (rng.random(2000) < 0.53).astype(float)
    lucky = np.where(rng.random(2000) < 0.10, 1.0, baseline)  # about +5 points
    others = [np.where(rng.random(2000) < 0.04, 1.0 - baseline, baseline) for _ in range(2)]  # about level
    assert paired_difference(lucky, baseline)["above"]
    result = paired_difference_over_seeds([lucky, *others], [baseline])
    assert not result["above"] and not result["every_seed_above"]
    assert result["per_seed_difference"][0] > 3 and result["seeds"] == 3 and result["baseline_seeds"] == 1
    assert result["ci95"][0] < 0 < result["ci95"][1]
    # every seed above by a similar margin: above, by both readings
    steady = [np.where(rng.random(2000) < 0.10, 1.0, baseline) for _ in range(3)]
    both = paired_difference_over_seeds(steady, [baseline])
    assert both["above"] and both["every_seed_above"]


def test_over_seeds_with_clusters_resamples_the_clusters_and_refuses_mismatched_shapes():
    import numpy as np

    from pipeline.common.paired_seeds import paired_difference_over_seeds

    rng = np.random.default_rng(2)
    base = (rng.random(400) < 0.5).astype(float)
    runs = [np.where(rng.random(400) < 0.2, 1.0, base) for _ in range(3)]
    by_text = paired_difference_over_seeds(runs, [base], clusters=[str(i // 20) for i in range(400)], unit="text")
    assert by_text["unit"] == "text" and by_text["units"] == 20
    with pytest.raises(ValueError, match="seeds x questions"):
        paired_difference_over_seeds(runs, [base[:399]])


def test_every_headline_comparison_is_declared_by_the_compare_stage(repo):
    from pipeline.stages.compare import HEADLINE_PAIRS, headline_name

    stage = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]["compare"]
    declared = {next(iter(o)) for o in stage["outs"] if next(iter(o)).startswith("${paths.metrics}/")}
    written = {f"${{paths.metrics}}/{t}/{headline_name(s, b)}.json" for t, s, b in HEADLINE_PAIRS}
    assert declared == written


def test_the_readme_results_table_is_what_the_reports_say(repo, tmp_path):
    """Every figure of the README's results table, the GPU table and the docs' `make results` example is read
    from its source (reports/compare.json, the GPU profile, metrics/), never typed. Checked as committed: the
    README describes the committed run, so a local rebuild whose trained figures moved (another processor, another
    draw) does not fail it; a commit whose README and reports disagree does."""
    import io
    import subprocess
    import sys
    import tarfile

    tree = subprocess.run(["git", "archive", "HEAD", "README.md", "docs", "reports", "metrics", "benchmarks/results",
                           "params.yaml"], cwd=repo, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tree)) as tar:
        tar.extractall(tmp_path, filter="data")
    res = subprocess.run([sys.executable, "-m", "pipeline.experiments.results_table", "--check", "--root",
                          str(tmp_path)], cwd=repo, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_a_gpu_run_from_before_the_paper_names_is_shown_under_them_and_says_its_intervals_resample_questions():
    from pipeline.experiments.results_table import gpu_table

    row = {"track": "strategyqa", "eval": "eval", "system": "qa_ir_d", "baseline": "majority", "figure": "acc",
           "system_mean": 53.3, "baseline_mean": 53.3, "difference": 0.0, "ci95": [-7.9, 8.3], "questions": 229}
    text = gpu_table({"device": "NVIDIA H100", "systems_vs_baselines": [row]})
    assert "| StrategyQA dev (229 / questions) | qa_ir_ora_d | majority |" in text  # gold steps: IR-ORA-D
    assert "qa_ir_d |" not in text and "resample questions" in text
    clustered = {**row, "system": "qa_ir_d", "unit": "question", "units": 229}
    assert "| qa_ir_d | majority |" in gpu_table({"device": "x", "systems_vs_baselines": [clustered]})


def test_every_string_a_gpu_node_writes_into_the_profile_is_escaped_in_the_generated_table():
    """A node's gpu_profile.json is a stranger's file: its device, versions, profile name, calibration drift and
    each pair's seed counts reach the docs' generated table, so each is escaped (no live tag, link or script)."""
    from pipeline.experiments.results_table import gpu_table

    evil = '<img src=x onerror=alert(1)><script>alert(2)</script>[link](http://evil.example)'
    row = {"track": "quail", "eval": "dev_heldout", "system": "mc_full", "baseline": "longchoice", "figure": "acc",
           "system_mean": 45.3, "baseline_mean": 30.1, "difference": 15.2, "ci95": [9.2, 21.1], "questions": 435,
           "unit": evil, "units": 24, "seeds": evil, "baseline_seeds": evil, "p_holm": 0.01, "family_size": evil,
           "verdict": "one run"}
    profile = {"device": evil, "torch": evil, "transformers": evil, "profile": evil,
               "stages": {"x": {"tokens_per_s": 1000.0}}, "systems_vs_baselines": [row],
               "source": {"commit": "abc", "nlquad_calibration": {"within_tolerance": False, "drift": [evil, evil]}}}
    text = gpu_table(profile)
    assert "<img" not in text and "<script" not in text and "](http" not in text and "http://" not in text

"""Systems trained under several seeds: the params' seeds list, where each run goes, the predictions file, the
summaries over runs, and compare's verdict, which must not rest on one lucky run."""

from __future__ import annotations

import pytest

from pipeline.common.seed_runs import (MIN_SEEDS, mean_over_runs, prepare_runs, run_dir, runs_of, seeded_predictions,
                                       spread, verdict)


def test_a_seeds_list_is_distinct_and_in_range_and_its_first_is_the_reference_run():
    from pipeline.params import ParamsError, project_section

    section = project_section("quail_mc", seeds=[7, 3, 5])
    assert section.seeds == [7, 3, 5] and section.seed == 7
    for bad, message in (([], "at least 1"), ([1, 1], "repeat"), ([-1], "outside"), ([2**32], "outside"),
                         (list(range(21)), "at most 20")):
        with pytest.raises((ParamsError, ValueError), match=message):
            project_section("quail_mc", seeds=bad)


def test_the_loop_gets_one_run_of_the_sections_seeds():
    from pipeline.params import project_section
    from pipeline.training.finetune import TrainConfig

    section = project_section("quail_mc", seeds=[7, 3])
    assert TrainConfig.from_params(section, "m").seed == 7
    assert TrainConfig.from_params(section, "m", seed=3).seed == 3
    with pytest.raises(ValueError, match="not one of the section's seeds"):
        TrainConfig.from_params(section, "m", seed=4)


def test_the_reference_run_keeps_the_models_path_and_the_others_go_under_seeds(tmp_path):
    assert run_dir(tmp_path, [42, 43], 42) == tmp_path
    assert run_dir(tmp_path, [42, 43], 43) == tmp_path / "seeds" / "43"
    with pytest.raises(ValueError, match="not one of"):
        run_dir(tmp_path, [42, 43], 44)


def test_prepare_runs_keeps_a_listed_seeds_checkpoints_and_drops_every_run_no_longer_trained_there(tmp_path):
    """DVC keeps a model's seeds/ while the stage reruns (persist), so an unfinished seed resumes from it; a
    seed dropped from the list, or now first (its run is the model folder itself), must not stay in the output."""
    model, live = tmp_path / "models/m", tmp_path / "dvclive/m"
    for seed in ("42", "43", "44"):
        (model / "seeds" / seed / "checkpoint-50").mkdir(parents=True)
        (live / "seeds" / seed).mkdir(parents=True)
    (model / "seeds" / ".final.partial").mkdir()  # a killed writer's leftover is the loop's to clean, not ours
    prepare_runs(model, live, [42, 43])
    assert sorted(p.name for p in (model / "seeds").iterdir()) == [".final.partial", "43"]
    assert (model / "seeds/43/checkpoint-50").is_dir()
    assert sorted(p.name for p in (live / "seeds").iterdir()) == ["43"]
    fresh = tmp_path / "models/new"
    prepare_runs(fresh, tmp_path / "dvclive/new", [7])
    assert (fresh / "seeds").is_dir() and not any((fresh / "seeds").iterdir())  # a DVC out even with one seed


def test_a_predictions_file_holds_every_run_in_the_params_order_and_refuses_another_shape():
    data = seeded_predictions([43, 42], {43: {"q": 1}, 42: {"q": 2}})
    assert data == {"seeds": [43, 42], "runs": {"43": {"q": 1}, "42": {"q": 2}}}
    assert list(runs_of(data)) == [43, 42]
    with pytest.raises(ValueError, match="not a seeded predictions file"):
        runs_of({"dev_heldout": {"q": 1}, "challenge": {}})  # a file from before seeds
    with pytest.raises(ValueError, match="are not the seeds"):
        runs_of({"seeds": [1, 2], "runs": {"1": {}}})
    with pytest.raises(ValueError, match="expected"):
        seeded_predictions([1, 2], {2: {}, 1: {}})


def test_spread_and_the_mean_of_reports_over_runs():
    assert spread([40.0, 42.0, 44.0]) == {"mean": 42.0, "sd": 2.0, "per_seed": [40.0, 42.0, 44.0], "seeds": 3}
    assert spread([40.0])["sd"] is None
    runs = [{"f1": 40.0, "n": 81, "by": {"a": {"f1": 10.0, "n": 3}}, "split": "test"},
            {"f1": 44.0, "n": 81, "by": {"a": {"f1": 20.0, "n": 3}}, "split": "test"}]
    assert mean_over_runs(runs) == {"f1": 42.0, "n": 81, "by": {"a": {"f1": 15.0, "n": 3}}, "split": "test"}


def test_a_verdict_needs_three_runs_of_each_trained_side():
    assert MIN_SEEDS == 3
    assert verdict(1.0, 5.0, 3) == "above" and verdict(-5.0, -1.0, 3) == "below" and verdict(-1.0, 1.0, 3) == "level"
    assert verdict(1.0, 5.0, 1) == "one run"  # trained once: an interval over units, no verdict
    assert verdict(1.0, 5.0, 3, baseline_seeds=1) == "one run"  # against a baseline trained once
    assert verdict(1.0, 5.0, 3, baseline_seeds=None) == "above"  # a baseline that trains nothing


def _pair(system_rows, baseline_rows, clusters, trained=False):
    from pipeline.stages.compare import _pair as pair

    return pair("quail", "dev_heldout", "s", "b", "acc", system_rows, baseline_rows, clusters,
                baseline_trained=trained)


def test_one_seed_above_and_the_others_level_is_not_above():
    """Three runs of a system on 40 texts of 5 questions: run 1 gets every question right, runs 2 and 3 answer
    exactly as the baseline (half right). Run 1 alone is far above; the verdict over seeds must not be."""
    n_texts, per_text = 40, 5
    clusters = [f"t{i // per_text}" for i in range(n_texts * per_text)]
    baseline = [float(i % 2) for i in range(n_texts * per_text)]
    lucky = [1.0] * len(baseline)
    row = _pair([lucky, baseline, baseline], [baseline], clusters)
    assert row["per_seed_difference"][0] > 40 and row["per_seed_difference"][1:] == [0.0, 0.0]
    assert row["verdict"] != "above" and row["above"] is False and row["every_seed_above"] is False
    assert row["ci95"][0] <= 0 < row["difference"]
    # the same lucky run alone: the units alone say above, but one run gets no verdict
    alone = _pair([lucky], [baseline], clusters)
    assert alone["ci95"][0] > 0 and alone["verdict"] == "one run" and alone["above"] is False
    # every run lucky: above, over seeds and texts
    assert _pair([lucky, lucky, lucky], [baseline], clusters)["verdict"] == "above"


def test_a_seeded_system_against_a_seeded_baseline_resamples_both():
    clusters = [f"t{i // 4}" for i in range(120)]
    good = [[float((i + s) % 4 != 0) for i in range(120)] for s in range(3)]  # 75% right
    poor = [[float((i + s) % 2 == 0) for i in range(120)] for s in range(3)]  # 50% right
    row = _pair(good, poor, clusters, trained=True)
    assert row["seeds"] == 3 and row["baseline_seeds"] == 3 and row["verdict"] == "above"
    assert _pair(good, poor[:1], clusters, trained=True)["verdict"] == "one run"


def test_every_trained_section_takes_several_seeds_and_the_first_is_the_reference():
    """Every training stage trains, predicts and scores each seed of its section's list (the auxiliary BoolQ
    model's included: tests/test_boolq_aux.py trains two); the first listed is the reference run."""
    from pipeline.params import ParamsError, project_section

    for section in ("boolq_aux", "span_window", "longformer", "quail_mc", "strategyqa_qa"):
        assert project_section(section, seeds=[5, 6]).seeds == [5, 6]
        assert project_section(section, seeds=[6, 5]).seed == 6
        with pytest.raises(ParamsError, match="repeat a seed"):
            project_section(section, seeds=[5, 5])

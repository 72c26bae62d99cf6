"""Sugawara et al. (2022) analysis: subsets, gap, and statistics checked against scipy on fixed inputs."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from pipeline.difficulty.analysis import (
    PassageMeasures,
    analyse,
    easy_hard,
    gaps,
    load_human_accuracies,
    passage_measures,
    pearson,
    welch,
)

X = [1.0, 2.0, 3.5, 4.0, 5.5, 7.0, 8.0]
Y = [2.1, 2.9, 4.2, 3.8, 6.0, 7.7, 7.9]


def test_pearson_and_welch_match_scipy():
    r = stats.pearsonr(X, Y)
    assert pearson(X, Y) == {"r": pytest.approx(r.statistic, abs=1e-6), "p": pytest.approx(r.pvalue, abs=1e-6), "n": 7}
    a, b = [3.0, 4.5, 5.0, 6.5, 2.0], [7.0, 9.5, 8.0, 12.0, 10.5, 11.0]
    t = stats.ttest_ind(a, b, equal_var=False)
    w = welch(a, b)
    assert w["t"] == pytest.approx(t.statistic, abs=1e-6) and w["p"] == pytest.approx(t.pvalue, abs=1e-6)
    # Welch, not Student: with unequal variances the two differ, and ours is the unequal-variance one
    assert w["t"] != pytest.approx(stats.ttest_ind(a, [7.0, 30.0, 8.0, 12.0, 10.5, 11.0]).statistic, abs=1e-3)
    assert (w["n_easy"], w["n_hard"], w["mean_easy"], w["mean_hard"]) == (5, 6, 4.2, 9.6667)


def test_degenerate_inputs_give_none_with_a_reason():
    assert pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])["r"] is None
    assert pearson([1.0, 2.0], [1.0, 2.0])["why_none"]
    assert welch([1.0], [2.0, 3.0])["t"] is None


def test_gap_and_easy_hard_thresholds():
    human = {"a": 100.0, "b": 80.0, "c": 90.0, "d": 60.0, "e": 50.0}
    model = {"a": 80.0, "b": 50.0, "c": 50.0, "d": 60.0, "x": 10.0}
    g = gaps(human, model)
    assert g == {"a": 20.0, "b": 30.0, "c": 40.0, "d": 0.0}  # e and x: only on one side
    easy, hard = easy_hard(g)
    assert easy == ["a", "d"] and hard == ["c"]  # 20 is easy, 40 is hard, 30 is neither


def test_analysis_with_and_without_humans():
    measures = {f"q{i}": PassageMeasures(100 + 10 * i, float(i), 5.0 - i / 10) for i in range(8)}
    model = {f"q{i}": float(v) for i, v in enumerate([90, 80, 75, 60, 50, 40, 30, 20])}
    only_model = analyse(measures, model, None)
    assert only_model["human"] is None and only_model["questions"] == 8
    expected = stats.pearsonr([100 + 10 * i for i in range(8)], list(model.values()))
    assert only_model["vs_model_accuracy"]["passage_words"]["r"] == pytest.approx(expected.statistic, abs=1e-6)
    human = {q: 100.0 for q in model}
    both = analyse(measures, model, human)["human"]
    assert both["questions"] == 8 and both["easy"] == 2 and both["hard"] == 5  # gaps 10,20 | 25,40 | 50..80
    gap = [100.0 - v for v in model.values()]
    assert both["vs_gap"]["fk_grade"]["r"] == pytest.approx(stats.pearsonr([float(i) for i in range(8)], gap).statistic, abs=1e-6)
    easy_fk, hard_fk = [0.0, 1.0], [3.0, 4.0, 5.0, 6.0, 7.0]
    assert both["easy_vs_hard"]["fk_grade"]["t"] == pytest.approx(stats.ttest_ind(easy_fk, hard_fk, equal_var=False).statistic, abs=1e-6)


def test_passage_measures_use_textstat_and_wordfreq():
    import textstat
    from wordfreq import zipf_frequency

    text = "The cat sat on the mat. It was a sunny day."
    m = passage_measures(text)
    assert m.passage_words == 11
    assert m.fk_grade == textstat.flesch_kincaid_grade(text)
    words = ["the", "cat", "sat", "on", "the", "mat", "it", "was", "a", "sunny", "day"]
    assert m.word_zipf == pytest.approx(sum(zipf_frequency(w, "en") for w in words) / len(words), abs=1e-4)
    assert passage_measures("Photosynthesis necessitates chlorophyll.").word_zipf < m.word_zipf


def test_human_accuracy_files(tmp_path):
    (tmp_path / "h.json").write_text(json.dumps({"a": 0.8, "b": 1.0}))
    assert load_human_accuracies(tmp_path / "h.json") == {"a": 80.0, "b": 100.0}
    (tmp_path / "h.jsonl").write_text('{"qid": "a", "human_accuracy": 60}\n{"qid": "b", "human_accuracy": 75}\n')
    assert load_human_accuracies(tmp_path / "h.jsonl") == {"a": 60.0, "b": 75.0}
    (tmp_path / "bad.jsonl").write_text('{"qid": "a"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_human_accuracies(tmp_path / "bad.jsonl")
    (tmp_path / "range.json").write_text(json.dumps({"a": 120}))
    with pytest.raises(ValueError, match="outside 0..100"):
        load_human_accuracies(tmp_path / "range.json")

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


def test_passage_measures_are_tested_over_passages_not_their_repeated_questions():
    """Four passages of six questions each: the passage measure is one value per passage, so its test has four
    points (the question-level r would count each passage six times and report a p-value far too small)."""
    words = {"t0": 100, "t1": 200, "t2": 300, "t3": 400}
    acc_by_text = {"t0": [100, 80, 60, 100, 80, 60], "t1": [70, 50, 60, 60, 70, 50],
                   "t2": [40, 60, 50, 60, 40, 50], "t3": [40, 20, 30, 30, 20, 40]}
    measures, model, passage_of = {}, {}, {}
    for t, accs in acc_by_text.items():
        for i, a in enumerate(accs):
            qid = f"{t}_q{i}"
            measures[qid] = PassageMeasures(words[t], float(words[t]) / 100, 5.0)
            model[qid], passage_of[qid] = float(a), t
    out = analyse(measures, model, None, passage_of)
    by_passage = stats.pearsonr(list(words.values()), [sum(v) / len(v) for v in acc_by_text.values()])
    by_question = stats.pearsonr([measures[q].passage_words for q in sorted(model)], [model[q] for q in sorted(model)])
    got = out["vs_model_accuracy"]["passage_words"]
    assert (out["questions"], out["passages"], got["n"]) == (24, 4, 4)
    assert got["r"] == pytest.approx(by_passage.statistic, abs=1e-6) and got["p"] == pytest.approx(by_passage.pvalue, abs=1e-6)
    assert by_question.pvalue < 1e-4 < got["p"]  # the same data, honestly counted, is much less certain


def test_question_measures_get_a_passage_resampled_interval_and_breakdowns():
    from pipeline.difficulty.analysis import cluster_pearson, wh_word

    assert [wh_word(q) for q in ("Why did she leave?", "After the war, how long did it last?", "Is it raining?",
                                 "The narrator believes what?")] == ["why", "how", "other", "what"]
    # within every passage, longer questions are answered slightly worse; between passages, noise
    import numpy as np

    rng = np.random.default_rng(0)
    x, y, clusters = [], [], []
    for t in range(12):
        level = rng.uniform(20, 80)
        for i in range(15):
            length = float(rng.integers(5, 20))
            x.append(length)
            y.append(level - 0.5 * length + rng.normal(0, 10))
            clusters.append(f"t{t}")
    res = cluster_pearson(x, y, clusters)
    assert res["r"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-6)
    assert res["ci95"][0] <= res["r"] <= res["ci95"][1] and res["passages"] == 12 and res["n"] == 180
    assert res == cluster_pearson(x, y, clusters)  # seeded
    measures = {f"q{i}": PassageMeasures(100, 5.0, 5.0) for i in range(4)}
    model = {"q0": 100.0, "q1": 0.0, "q2": 50.0, "q3": 50.0}
    qm = {"q0": {"question_words": 4, "option_words": 2.0, "wh_word": "why", "question_type": "Causality"},
          "q1": {"question_words": 9, "option_words": 3.5, "wh_word": "why", "question_type": "Causality"},
          "q2": {"question_words": 6, "option_words": 1.0, "wh_word": "who", "question_type": "Character_identity"},
          "q3": {"question_words": 7, "option_words": 4.0, "wh_word": "other", "question_type": "Factual"}}
    out = analyse(measures, model, None, {"q0": "a", "q1": "a", "q2": "b", "q3": "b"}, qm)
    assert out["by_wh_word"] == {"other": {"questions": 1, "model_accuracy": 50.0},
                                 "who": {"questions": 1, "model_accuracy": 50.0},
                                 "why": {"questions": 2, "model_accuracy": 50.0}}
    assert out["by_question_type"]["Causality"] == {"questions": 2, "model_accuracy": 50.0}
    assert out["question_measures"]["question_words"]["passages"] == 2


def _release_record(pid: str, passage: str, human: float, model: float, **extra) -> dict:
    return {"passage_id": pid, "passage": passage, "question": "Why did the author write this?",
            "options": ["To inform.", "To persuade the reader.", "To entertain.", "None of them."],
            "gold_label": 0, "human_accuracy": human, "model_accuracy": model, "valid": True, **extra}


def test_a_release_in_sugawara_et_als_shape_gives_the_papers_gap_analysis(tmp_path):
    """A hand-made file in the shape of the paper's data (nii-cl/qa-text-source-comparison): the gap, easy and
    hard subsets and the passage-level tests come from the release's own accuracies; unvalidated questions and
    those whose passage was not restored are left out and counted."""
    from pipeline.difficulty.release import load_release, main, release_study

    easy_text = "The cat sat on the mat. It was a sunny day. The dog ran to the park."
    hard_text = ("Notwithstanding considerable epistemological ambiguity, the committee's deliberations "
                 "culminated in an unprecedented constitutional reinterpretation of jurisdictional prerogatives.")
    records = {
        "a1": _release_record("p1", easy_text, 1.0, 0.9),
        "a2": _release_record("p3", easy_text + " Birds sing.", 1.0, 0.875),
        "b1": _release_record("p2", hard_text, 1.0, 0.25),
        "b2": _release_record("p6", hard_text + " It was final.", 0.5, 0.0),
        "c1": _release_record("p3", easy_text + " Birds sing.", 1.0, 0.75),
        "x1": _release_record("p4", "Text.", 1.0, 0.5, valid=False),
        "x2": _release_record("p5", "", 1.0, 0.5),  # an MCTest/RACE/ReClor passage not restored
    }
    path = tmp_path / "complete_data.json"
    path.write_text(json.dumps(records))
    questions, left = load_release(path)
    assert left == {"not_valid": 1, "no_passage": 1} and {q.qid for q in questions} == {"a1", "a2", "b1", "b2", "c1"}
    assert {q.qid: q.human_accuracy - q.model_accuracy for q in questions}["b1"] == 75.0  # shares -> percent
    result = release_study(questions)
    human = result["human"]
    assert (human["questions"], human["passages"], human["easy"], human["hard"]) == (5, 4, 2, 2)
    assert human["vs_gap"]["fk_grade"]["n"] == 4 and human["vs_gap"]["fk_grade"]["r"] > 0  # harder text, wider gap
    assert human["easy_vs_hard"]["fk_grade"]["t"] < 0  # the hard questions' passages read harder
    assert "human-model gap" in result["measured"]
    assert main([str(path), "--out", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text())["left_out"] == left
    bad = dict(records, y=_release_record("p6", easy_text, "high", 0.5))
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="record y: .*human_accuracy must be a number"):
        load_release(path)


def test_holm_adjusts_a_family_of_p_values_step_down():
    """Holm (1979): the i-th smallest of m p-values times m - i + 1, made monotone, capped at 1; a measure not
    computed stays None and is not counted. Checked against the definition on a worked example."""
    from pipeline.common.verdicts import holm
    from pipeline.difficulty.analysis import with_holm

    assert holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": None}) == {"a": 0.03, "b": 0.06, "c": 0.06, "d": None}
    assert holm({"a": 0.5, "b": 0.6}) == {"a": 1.0, "b": 1.0}
    assert holm({"a": 0.001, "b": 0.02}) == {"a": 0.002, "b": 0.02}
    out = with_holm({"x": {"r": 0.2, "p": 0.012}, "y": {"r": 0.1, "p": 0.3}, "z": {"r": 0.3, "p_questions_as_independent": 0.02}})
    assert out["x"]["p_holm"] == 0.036 and out["x"]["significant_holm"]
    assert out["z"]["p_holm"] == 0.04 and out["y"]["p_holm"] == 0.3 and not out["y"]["significant_holm"]

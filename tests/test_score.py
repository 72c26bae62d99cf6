"""``pipeline.experiments.score``: a user's predictions scored on an eval set by the stages' own measures, paired
with every system compare scored there (Holm over the family), per type and domain for QuAIL; a stage's own
predictions file gives that system's figures and a zero difference to itself; a malformed file is refused naming
the question and the field. The eval sets here are small, made in the test, in compare's per-question format."""

from __future__ import annotations

import json
import random

import pytest

from pipeline.experiments.score import ScoreError, lines, main, read_runs, score


def _quail(n_texts: int = 12, per_text: int = 4) -> dict:
    rng = random.Random(0)
    rows, oracle, random_sys = {}, {}, {}
    for t in range(n_texts):
        for k in range(per_text):
            qid = f"t{t}_q{k}"
            gold = rng.randrange(4)
            guess = rng.randrange(4)
            oracle[qid], random_sys[qid] = gold, guess
            rows[qid] = {"unit": f"t{t}", "question_type": ["Causality", "Factual"][k % 2],
                         "domain": ["fiction", "news"][t % 2], "options": ["a", "b", "c", "d"], "gold": gold,
                         "systems": {"random": {"prediction": guess, "runs": 1, "acc": 100.0 * (guess == gold)},
                                     "mc_full": {"prediction": gold, "runs": 3, "acc": 100.0}}}
    return {"quail/dev_heldout": rows}, oracle, random_sys


def test_a_systems_own_predictions_give_its_figures_and_no_difference_to_itself():
    per_question, oracle, random_sys = _quail()
    report = score("quail/dev_heldout", [random_sys], per_question)
    mean = sum(r["systems"]["random"]["acc"] for r in per_question["quail/dev_heldout"].values()) / 48
    assert report["figures"]["acc"] == round(mean, 2) and report["unit"] == "text" and report["units"] == 12
    pairs = {p["against"]: p for p in report["pairs"]}
    assert pairs["random"]["difference"] == 0 and pairs["random"]["reading"] == "level"
    assert pairs["mc_full"]["difference"] < 0 and pairs["mc_full"]["reading"] == "below"
    assert {p["p_holm"] is None or p["p_holm"] >= p["p_value"] for p in report["pairs"]} == {True}
    assert set(report["breakdowns"]) == {"question_type", "domain"}
    assert sum(g["questions"] for g in report["breakdowns"]["domain"].values()) == 48
    perfect = score("quail/dev_heldout", [oracle], per_question)
    assert perfect["figures"]["acc"] == 100.0 and {p["against"]: p["reading"] for p in perfect["pairs"]} == {
        "random": "above", "mc_full": "level"}
    assert any("against each system on acc" in line for line in lines(perfect))


def test_seeded_files_and_keys_are_read_run_by_run():
    _, oracle, random_sys = _quail()
    seeded = {"seeds": [1, 2], "runs": {"1": {"dev_heldout": oracle}, "2": {"dev_heldout": random_sys}}}
    runs = read_runs(seeded, ["dev_heldout"])
    assert runs == [oracle, random_sys]
    with pytest.raises(ScoreError, match="run of seed 1: no key 'challenge'"):
        read_runs(seeded, ["challenge"])


@pytest.mark.parametrize("bad, message", [
    ({"t0_q0": "b"}, "question 't0_q0': the prediction must be an option index 0-3, got 'b'"),
    ({"t0_q0": True}, "must be an option index"),
    ({"t0_q0": 4}, "option index 0-3, got 4"),
])
def test_a_malformed_choice_is_refused_naming_the_question(bad, message):
    per_question, oracle, _ = _quail()
    with pytest.raises(ScoreError, match=message):
        score("quail/dev_heldout", [{**oracle, **bad}], per_question)


def test_missing_and_foreign_ids_and_unknown_sets_are_refused():
    per_question, oracle, _ = _quail()
    with pytest.raises(ScoreError, match=r"1 question\(s\) of quail/dev_heldout have no prediction"):
        score("quail/dev_heldout", [{k: v for k, v in oracle.items() if k != "t0_q0"}], per_question)
    with pytest.raises(ScoreError, match="not in quail/dev_heldout"):
        score("quail/dev_heldout", [{**oracle, "x": 1}], per_question)
    with pytest.raises(ScoreError, match="eval set 'quail/test': one of quail/dev_heldout"):
        score("quail/test", [oracle], per_question)


def test_yes_no_answers_in_every_documented_form():
    rows = {f"q{i}": {"unit": f"q{i}", "gold": "yes" if i % 2 else "no",
                      "systems": {"majority": {"prediction": "yes", "runs": 1, "acc": 100.0 * (i % 2)}}}
            for i in range(20)}
    per_question = {"strategyqa/eval": rows}
    forms = {f"q{i}": [i % 2 == 1, "yes" if i % 2 else "No", {"answer": bool(i % 2)}][i % 3] for i in range(20)}
    report = score("strategyqa/eval", [forms], per_question)
    assert report["figures"]["acc"] == 100.0 and report["pairs"][0]["difference"] == 50.0
    with pytest.raises(ScoreError, match="question 'q0': field 'answer' missing"):
        score("strategyqa/eval", [{**forms, "q0": {"label": 1}}], per_question)
    with pytest.raises(ScoreError, match="field 'answer' must be yes/no or true/false, got 'maybe'"):
        score("strategyqa/eval", [{**forms, "q0": "maybe"}], per_question)


def _nlquad() -> tuple[dict, dict, dict]:
    paragraphs, rows, gold_preds = [], {}, {}
    for a in range(6):
        context = " ".join(f"w{a}_{i}" for i in range(40))
        qas = []
        for k in range(2):
            start = context.index(f"w{a}_{10 + 15 * k}")
            end = context.index(f"w{a}_{20 + 15 * k}") + len(f"w{a}_{20 + 15 * k}")
            qid = f"a{a}_{k}"
            qas.append({"id": qid, "question": f"q{k}", "answers": [{"text": context[start:end],
                                                                       "answer_start": start, "answer_end": end}]})
            gold_preds[qid] = {"text": context[start:end], "start": start, "end": end}
            rows[qid] = {"unit": f"a{a}", "gold": context[start:end],
                         "systems": {"first_window": {"prediction": context[:30], "runs": 1,
                                                      "IoU": 0.0, "F1": 0.0, "EM": 0.0}}}
        paragraphs.append({"title": f"a{a}", "paragraphs": [{"context": context, "qas": qas}]})
    return {"nlquad/test": rows}, {"data": paragraphs}, gold_preds


def test_spans_are_scored_by_the_stages_measures_and_checked_field_by_field():
    per_question, dataset, gold = _nlquad()
    report = score("nlquad/test", [gold], per_question, dataset)
    assert report["figures"] == {"IoU": 100.0, "F1": 100.0, "EM": 100.0} and report["primary"] == "IoU"
    assert report["unit"] == "article" and {p["figure"] for p in report["pairs"]} == {"IoU", "F1", "EM"}
    with pytest.raises(ScoreError, match="question 'a0_0': field 'start' missing"):
        score("nlquad/test", [{**gold, "a0_0": {"text": "x", "end": 3}}], per_question, dataset)
    with pytest.raises(ScoreError, match="field 'end' must be a character offset"):
        score("nlquad/test", [{**gold, "a0_0": {"text": "x", "start": 0, "end": 10**6}}], per_question, dataset)
    with pytest.raises(ScoreError, match="field 'start' .* is after 'end'"):
        score("nlquad/test", [{**gold, "a0_0": {"text": "x", "start": 9, "end": 3}}], per_question, dataset)


def test_the_command_says_what_is_wrong_in_one_line(tmp_path, capsys):
    per_question, oracle, _ = _quail()
    pq = tmp_path / "per_question.json"
    pq.write_text(json.dumps(per_question))
    good, broken = tmp_path / "p.json", tmp_path / "broken.json"
    good.write_text(json.dumps(oracle))
    broken.write_text("{not json")
    out = tmp_path / "report.json"
    assert main(["quail/dev_heldout", str(good), "--per-question", str(pq), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["figures"]["acc"] == 100.0
    assert main(["quail/dev_heldout", str(broken), "--per-question", str(pq)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not readable JSON" in err[0]

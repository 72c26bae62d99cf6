"""StrategyQA loading, query building, step merging and Recall@10 exactly as the authors define it."""

from __future__ import annotations

import json

import pytest

from pipeline.search.analysis import remove_stop_words
from pipeline.strategyqa.data import (
    StrategyQuestion,
    load_predicted_decompositions,
    load_questions,
)
from pipeline.strategyqa.retrieval import (
    mean_recall,
    merge_step_runs,
    recall_at_k,
    step_queries,
)


def q(evidence, qid="q1", decomposition=("Step one?", "Is #1 bigger than 5?")) -> StrategyQuestion:
    return StrategyQuestion(qid=qid, question="Is it?", answer=True, decomposition=tuple(decomposition),
                            evidence=tuple(evidence))


def test_recall_is_max_over_annotators_of_gold_union_over_steps():
    question = q([
        [[["A-0", "A-1"]], [["B-2"]], ["operation"]],  # annotator 1: gold {A-0, A-1, B-2}
        [[["C-0"]], ["no_evidence"], ["operation"]],   # annotator 2: gold {C-0}
        [["no_evidence"], ["no_evidence"], ["operation"]],  # annotator 3: no evidence -> 0
    ])
    assert [sorted(g) for g in question.gold_paragraphs()] == [["A-0", "A-1", "B-2"], ["C-0"], []]
    assert recall_at_k(question, ["A-0", "X", "B-2"]) == pytest.approx(2 / 3)
    assert recall_at_k(question, ["C-0"]) == 1.0
    assert recall_at_k(question, ["Z"]) == 0.0
    # only the top 10 count
    assert recall_at_k(question, [f"X{i}" for i in range(10)] + ["C-0"]) == 0.0


def test_annotator_without_evidence_scores_zero_and_mean_over_questions():
    empty = q([[["no_evidence"], ["operation"]]], qid="e")
    full = q([[[["P-1"]], ["operation"]]], qid="f")
    assert recall_at_k(empty, ["P-1"]) == 0.0
    assert mean_recall([empty, full], {"e": {"P-1": 1.0}, "f": {"P-1": 2.0}}) == 0.5


def test_step_queries_drop_answer_references_and_merge_keeps_best_score():
    assert step_queries([q([])]) == {"q1::0": "Step one?", "q1::1": "Is bigger than 5?"}
    merged = merge_step_runs({"q1::0": {"A": 3.0, "B": 1.0}, "q1::1": {"B": 5.0, "C": 2.0}, "q2::0": {"D": 1.0}}, k=2)
    assert merged == {"q1": {"B": 5.0, "A": 3.0}, "q2": {"D": 1.0}}


def test_stop_words_removed_from_question_queries():
    assert remove_stop_words("Is the Eiffel Tower taller than the statue of Liberty?") == \
        "Eiffel Tower taller than statue Liberty?"


def test_real_strategyqa_files_load(shared):
    dev = load_questions(shared / "data/strategyqa/dev.json")
    assert len(dev) == 229
    first = dev[0]
    assert first.qid == "e0044a7b4d146d611e73"
    assert [sorted(g) for g in first.gold_paragraphs()] == [
        ["Albany, Georgia-1", "Albany, New York-2"], ["Albany, Georgia-35", "Albany, New York-2"],
        ["Albany, Georgia-1", "Albany, New York-2"]]
    preds = load_predicted_decompositions(shared / "data/strategyqa/generated/bart_decomp_dev_predictions.jsonl")
    assert len(preds) == 229 and preds[first.qid][0] == "What is the population of Albany, Georgia?"
    assert set(step_queries(dev[:3], preds)) >= {f"{first.qid}::0", f"{first.qid}::1"}


def test_bad_question_files_say_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError, match="StrategyQA file not found"):
        load_questions(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_questions(tmp_path / "bad.json")
    (tmp_path / "obj.json").write_text(json.dumps({"qid": 1}))
    with pytest.raises(ValueError, match="expected a JSON list"):
        load_questions(tmp_path / "obj.json")
    (tmp_path / "noq.json").write_text(json.dumps([{"qid": "a"}]))
    with pytest.raises(ValueError, match=r"item 0 lacks \['question'\]"):
        load_questions(tmp_path / "noq.json")


@pytest.mark.parametrize("record,message", [
    ({"qid": "q1", "question": "Is it?", "answer": "yes"}, r"item 0 \(qid 'q1'\): field 'answer' is a str, expected bool"),
    ({"qid": "q1", "question": ["Is", "it?"]}, "field 'question' is a list, expected str"),
    ({"qid": "q1", "question": "Is it?", "decomposition": "one step"}, "field 'decomposition' is a str"),
    ({"qid": "q1", "question": "Is it?", "decomposition": [1, 2]}, "field 'decomposition' holds a int"),
    ({"qid": "q1", "question": "Is it?", "evidence": [["Fly-0"]]}, r"field 'evidence'\[0\] is not a list of steps"),
    ({"qid": 7, "question": "Is it?"}, "field 'qid' is a int"),
    ("just a string", "item 0 is a str, not a question object"),
])
def test_wrong_field_types_name_file_record_and_field(tmp_path, record, message):
    path = tmp_path / "train.json"
    path.write_text(json.dumps([record]))
    with pytest.raises(ValueError, match=message) as err:
        load_questions(path)
    assert str(path) in str(err.value)

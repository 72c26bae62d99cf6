"""StrategyQA cross-validation: every labelled question scored once, by a model that never saw it nor chose its
checkpoint on it; folds shared by the settings so their answers pair; a killed run resumes at the next fold."""

from __future__ import annotations

import json
import typing

import pytest

from pipeline.strategyqa.config import CVSetting
from pipeline.strategyqa.data import StrategyQuestion
from pipeline.strategyqa.folds import CV_SETTINGS, assign_folds, fold_sizes, fold_split, labelled_pool


def _q(qid: str, answer: bool | None = True) -> StrategyQuestion:
    return StrategyQuestion(qid=qid, question=f"is {qid}?", answer=answer, decomposition=(), evidence=())


def test_the_params_schema_and_the_folds_module_name_the_same_settings():
    assert typing.get_args(CVSetting) == CV_SETTINGS
    assert "ir_d" not in CV_SETTINGS  # predicted decompositions exist for the dev questions only


def test_each_question_is_scored_in_exactly_one_fold_and_never_selects_its_own_model():
    questions = [_q(f"q{i}", i % 3 == 0) for i in range(103)]
    assignment = assign_folds([q.qid for q in questions], 5, seed=13)
    assert sorted(fold_sizes(assignment)) == [20, 20, 21, 21, 21]
    scored = []
    for fold in range(5):
        split = fold_split(questions, assignment, fold, dev_share=0.1, seed=42)
        test, seen = {q.qid for q in split.test}, {q.qid for q in split.train + split.dev}
        assert not test & seen and len(test | seen) == 103
        assert split.dev and not {q.qid for q in split.train} & {q.qid for q in split.dev}
        scored += test
    assert sorted(scored) == sorted(q.qid for q in questions)


def test_folds_depend_on_the_seed_not_on_the_files_order():
    ids = [f"q{i}" for i in range(50)]
    assert assign_folds(ids, 5, 13) == assign_folds(list(reversed(ids)), 5, 13)
    assert assign_folds(ids, 5, 13) != assign_folds(ids, 5, 14)


def test_bad_pools_and_fold_counts_are_refused_by_name():
    with pytest.raises(ValueError, match="'q1' appears twice"):
        labelled_pool([_q("q1")], [_q("q1")])
    with pytest.raises(ValueError, match="'q2' has no yes/no answer"):
        labelled_pool([_q("q2", None)])
    with pytest.raises(ValueError, match="at least 2 folds"):
        assign_folds(["a", "b"], 1, 0)
    with pytest.raises(ValueError, match="cannot fill 3 folds"):
        assign_folds(["a", "b"], 3, 0)


def test_params_refuse_one_fold_an_unknown_setting_and_a_repeat(tmp_path):
    from pipeline.params import ParamsError, load_params
    from tests.params_files import write_params

    for cv, why in (({"folds": 1}, "1 fold"), ({"settings": ["ir_d"]}, "settings"),
                    ({"settings": ["ir_q", "ir_q"]}, "named twice")):
        path = write_params(tmp_path / "params.yaml", {"strategyqa_cv": cv})
        with pytest.raises(ParamsError, match=why):
            load_params(path)


def test_a_run_may_choose_folds_and_settings_but_not_paths():
    from pipeline.params_trust import check_run_settable

    check_run_settable({"strategyqa_cv.folds": 5, "strategyqa_cv.seed": 1})


@pytest.mark.slow  # trains eight tiny models
def test_cross_validation_runs_pairs_settings_and_resumes_after_a_kill(shared, small_sample, tmp_path, monkeypatch):
    from flows.stage import stage_flow
    from pipeline.stages import strategyqa_cv
    from tests.params_files import project_benchmark_sources, write_params
    from tests.test_strategyqa_tracks_flow import generated_workspace

    monkeypatch.chdir(tmp_path)
    generated, cut = generated_workspace(tmp_path, small_sample)
    (tmp_path / "predicted.jsonl").write_text("".join(
        json.dumps({"qid": q["qid"], "decomposition": q["decomposition"]}) + "\n" for q in generated[cut:]))
    params = write_params(tmp_path / "params.yaml", {
        "benchmark_sources": project_benchmark_sources(strategyqa_train="train.json", strategyqa_eval="eval.json"),
        "strategyqa_qa": {"gold_paragraphs": "data/wiki/paragraphs.jsonl", "predicted_decompositions": "predicted.jsonl",
                          "max_steps": 2, "checkpoint_every": 2, "control_max_steps": None,
                          "eval_every": 2, "batch_size": 4, "max_seq_len": 64, "device": "cpu"},
        "strategyqa_cv": {"folds": 0, "settings": ["question_only", "ir_q"], "seed": 3},
    })
    for name in ("benchmark_sources", "strategyqa_contexts"):
        stage_flow(name).fn(params_file=params)
    off = stage_flow("strategyqa_cv").fn(params_file=params)
    assert off["folds"] == 0 and json.loads((tmp_path / "data/predictions/strategyqa_cv.json").read_text()) == {}

    text = (tmp_path / "params.yaml").read_text().replace("folds: 0", "folds: 2")
    (tmp_path / "params.yaml").write_text(text)
    # a kill during the third training (ir_q's first fold): the two question_only folds are kept
    trained, real = [], strategyqa_cv.launch

    def killed_on_the_third(train, p, variant, out_dir):
        trained.append(variant)
        if len(trained) == 3:
            raise KeyboardInterrupt
        return real(train, p, variant, out_dir)

    monkeypatch.setattr(strategyqa_cv, "launch", killed_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        stage_flow("strategyqa_cv").fn(params_file=params)
    assert trained == ["question_only:0", "question_only:1", "ir_q:0"]
    trained.clear()
    # the contexts and the start weights are read once a run, not again by each fold's training
    from pipeline.stages import train_strategyqa_qa
    reads = {"contexts": 0, "weights": 0}
    real_load, real_digest = strategyqa_cv.load_cv_data, train_strategyqa_qa._weights_digest

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            reads[name] += 1
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(strategyqa_cv, "load_cv_data", counted("contexts", real_load))
    monkeypatch.setattr(train_strategyqa_qa, "_weights_digest", counted("weights", real_digest))
    report = stage_flow("strategyqa_cv").fn(params_file=params)
    assert trained == ["ir_q:0", "ir_q:1"]  # the finished folds were read back, not trained again
    assert reads == {"contexts": 1, "weights": 1}, reads
    labelled = len(generated)
    assert report["labelled_questions"] == labelled and sum(report["fold_sizes"]) == labelled
    predictions = json.loads((tmp_path / "data/predictions/strategyqa_cv.json").read_text())
    for setting in ("question_only", "ir_q"):
        summary = report["settings"][setting]
        assert summary["questions"] == labelled == len(predictions[setting])
        assert summary["versus_majority"]["unit"] == "question"
        assert [f["test_questions"] for f in summary["folds"]] == report["fold_sizes"]
    # the same folds for both settings: their answers pair question by question
    assert {q: a["fold"] for q, a in predictions["ir_q"].items()} == \
        {q: a["fold"] for q, a in predictions["question_only"].items()}
    assert report["settings"]["ir_q"]["versus_question_only"]["questions"] == labelled
    assert not (tmp_path / "models/strategyqa_cv").exists()  # finished: nothing left to resume

"""The StrategyQA answering stages end to end on the sample: generated questions whose evidence lives in the
sample dump, so ORA-P has its gold paragraph texts and runs (with a 2-step budget: the wiring, not a score).
Train and eval are disjoint question files, and every reported figure is recomputed from the files written."""

from __future__ import annotations

import pytest

import dataclasses
import json
from collections import Counter

from flows.stage import stage_flow
from pipeline.common.seed_runs import runs_of
from pipeline.search.tantivy_backend import TantivyBackend
from pipeline.wiki.paragraphs import dump_paragraphs
from tests.params_files import project_benchmark_sources, write_params

pytestmark = pytest.mark.slow  # trains models

benchmark_sources_flow, strategyqa_contexts_flow, *strategyqa_qa_flows = (
    stage_flow(name) for name in ("benchmark_sources", "strategyqa_contexts", "train_strategyqa_qa",
                                  "predict_strategyqa_qa", "evaluate_strategyqa_qa"))


def strategyqa_qa(params: str, setting: str) -> dict:
    """The setting's train, predict and evaluate stages in order, as dvc repro runs them: the last one's report,
    with the training statistics the first returned."""
    stats, predicted, report = (flow.fn(params_file=params, variant=setting) for flow in strategyqa_qa_flows)
    assert predicted["eval_questions"] == report["eval_questions"]
    return {**report, "steps": stats["steps"]}


def ora_train_ids(contexts: dict, train: list[dict]) -> set[str]:
    """Training questions ORA-P can ask: those with a gold paragraph found (all of them in the sample)."""
    assert contexts["ora_p"]["questions_with_gold"]["train"] == len(train)
    return {q["qid"] for q in train}


def generated_workspace(folder, small_sample) -> tuple[list[dict], int]:
    """The sample dump's paragraphs and their index in ``folder`` (the stages' layout), and its generated
    StrategyQA questions split into train.json and eval.json: (the questions, the first eval index)."""
    paras = [dataclasses.asdict(p) for p in dump_paragraphs(small_sample / "enwiki-cirrussearch-content.json.gz",
                                                             Counter(), min_chars=2)]
    (folder / "data/wiki").mkdir(parents=True)
    (folder / "data/wiki/paragraphs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in paras))
    TantivyBackend(folder / "data/index/tantivy").index(paras)
    generated = json.loads((small_sample / "strategyqa_generated.json").read_text())
    cut = len(generated) * 2 // 3
    (folder / "train.json").write_text(json.dumps(generated[:cut]))
    (folder / "eval.json").write_text(json.dumps(generated[cut:]))
    return generated, cut


def test_ora_p_and_ir_d_run_on_the_generated_sample(shared, small_sample, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    generated, cut = generated_workspace(tmp_path, small_sample)
    # IR-D's predicted decompositions: a decomposer that finds only the first step of each gold one
    (tmp_path / "predicted.jsonl").write_text("".join(
        json.dumps({"qid": q["qid"], "decomposition": q["decomposition"][:1]}) + "\n" for q in generated[cut:]))
    write_params(tmp_path / "params.yaml", {
        "benchmark_sources": project_benchmark_sources(strategyqa_train="train.json", strategyqa_eval="eval.json"),
        "strategyqa_qa": {"gold_paragraphs": "data/wiki/paragraphs.jsonl", "max_steps": 2, "checkpoint_every": 2,
                          "batch_size": 4, "max_seq_len": 128, "device": "cpu", "seeds": [42, 43],
                          "predicted_decompositions": "predicted.jsonl"},
    })
    params = str(tmp_path / "params.yaml")
    benchmark_sources_flow.fn(params_file=params)
    contexts = strategyqa_contexts_flow.fn(params_file=params)
    n = contexts["eval_questions"]
    assert (contexts["train_questions"], n) == (cut, len(generated) - cut) and "skipped" not in contexts["ora_p"]
    assert contexts["ora_p"]["questions_with_gold"]["eval"] > 0.8 * n  # generated evidence is in the dump
    assert contexts["eval_recall@10"]["ir_ora_d"] > 80  # percent; the generated steps reuse the evidence's words
    # IR-D retrieves the eval questions with the predicted steps, IR-ORA-D with the gold ones; training is the same
    ranked = json.loads((tmp_path / "data/strategyqa_qa/contexts.json").read_text())["ranked"]
    assert ranked["ir_d"]["train"] == ranked["ir_ora_d"]["train"] and ranked["ir_d"]["eval"] != ranked["ir_ora_d"]["eval"]
    assert contexts["eval_recall@10"]["ir_d"] < contexts["eval_recall@10"]["ir_ora_d"]
    assert contexts["eval_decompositions"] == {"ir_d": "predicted.jsonl", "ir_ora_d": "gold"}
    assert 0 < contexts["gold_share"] == round(contexts["corpus_gold_paragraphs"] / contexts["corpus_paragraphs"], 4)
    ora = strategyqa_qa(params, "ora_p")
    assert ora["eval_questions"] == contexts["ora_p"]["questions_with_gold"]["eval"]
    assert ora["eval_empty_context"] == 0 and ora["steps"] == 2
    # two training runs (seeds 42 and 43): each its own model, answers and curves; the figure is their mean
    runs = runs_of(json.loads((tmp_path / "data/predictions/strategyqa_ora_p.json").read_text()))
    assert list(runs) == [42, 43] and ora["seeds"] == [42, 43]
    assert (tmp_path / "models/strategyqa_ora_p/seeds/43/final/config.json").exists()
    assert (tmp_path / "dvclive/strategyqa_ora_p/seeds/43/metrics.json").exists()
    gold = {q["qid"]: q["answer"] for q in generated[cut:]}
    per_run = []
    for preds in runs.values():
        assert len(preds) == ora["eval_questions"] and all(isinstance(v["answer"], bool) for v in preds.values())
        assert set(preds) <= set(gold)
        assert all((p["logits"][1] > p["logits"][0]) == p["answer"] for p in preds.values())  # answer = argmax
        per_run.append(round(100 * sum(p["answer"] == gold[q] for q, p in preds.items()) / len(preds), 2))
    assert ora["over_seeds"]["per_seed"] == per_run and ora["accuracy"] == round(sum(per_run) / 2, 2)
    assert ora["accuracy_ci95_resamples"] == "runs and questions"
    assert [r["seed"] for r in ora["training_per_seed"]] == [42, 43]
    preds = runs[42]
    majority = Counter(q["answer"] for q in generated[:cut] if q["qid"] in ora_train_ids(contexts, generated[:cut]))
    assert ora["majority_answer"] == ("yes" if majority[True] > majority[False] else "no")
    said = ora["majority_answer"] == "yes"
    assert ora["majority_baseline"] == round(100 * sum(gold[q] == said for q in preds) / len(preds), 2)
    ird = strategyqa_qa(params, "ir_d")
    assert ird["eval_questions"] == n and ird["eval_empty_context"] == 0
    assert (tmp_path / "models/strategyqa_ir_d/final/config.json").exists()
    # a predictions file that misses an eval question is refused by name, not run with an empty IR-D context
    (tmp_path / "predicted.jsonl").write_text("".join(
        json.dumps({"qid": q["qid"], "decomposition": q["decomposition"]}) + "\n" for q in generated[cut + 1:]))
    with pytest.raises(ValueError, match=r"predicted\.jsonl: no predicted decomposition for 1 of the"):
        strategyqa_contexts_flow.fn(params_file=params)

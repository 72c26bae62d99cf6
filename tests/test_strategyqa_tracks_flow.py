"""The StrategyQA answering stages end to end on the sample: generated questions whose evidence lives in the
sample dump, so ORA-P has its gold paragraph texts and runs (with a 2-step budget: the wiring, not a score)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import yaml

from flows.benchmark_sources import benchmark_sources_flow
from flows.strategyqa_contexts import strategyqa_contexts_flow
from flows.strategyqa_qa import strategyqa_qa_flow
from pipeline.search.tantivy_backend import TantivyBackend
from pipeline.wiki.paragraphs import dump_paragraphs


def test_ora_p_and_ir_d_run_on_the_generated_sample(small_sample, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paras = [dataclasses.asdict(p) for p in dump_paragraphs(small_sample / "enwiki-cirrussearch-content.json.gz", Counter())]
    (tmp_path / "data/wiki").mkdir(parents=True)
    (tmp_path / "data/wiki/paragraphs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in paras))
    TantivyBackend(tmp_path / "data/index/tantivy").index(paras)
    questions = str(small_sample / "strategyqa_generated.json")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({
        "benchmark_sources": {"strategyqa_train": questions, "strategyqa_eval": questions,
                              "quail_dev": "absent.xml", "quail_challenge": "absent.jsonl"},
        "strategyqa_qa": {"gold_paragraphs": "data/wiki/paragraphs.jsonl", "max_steps": 2, "checkpoint_every": 2,
                          "batch_size": 4, "max_seq_len": 128, "device": "cpu"},
    }))
    params = str(tmp_path / "params.yaml")
    benchmark_sources_flow.fn(params_file=params)
    contexts = strategyqa_contexts_flow.fn(params_file=params)
    n = contexts["eval_questions"]
    assert n > 10 and "skipped" not in contexts["ora_p"]
    assert contexts["ora_p"]["questions_with_gold"]["eval"] > 0.8 * n  # generated evidence is in the dump
    assert contexts["eval_recall@10"]["ir_d"] > 0.8  # the generated steps reuse the evidence's words
    ora = strategyqa_qa_flow.fn("ora_p", params_file=params)
    assert ora["eval_questions"] == contexts["ora_p"]["questions_with_gold"]["eval"]
    assert ora["eval_empty_context"] == 0 and ora["steps"] == 2
    assert 0.0 <= ora["accuracy"] <= 100.0 and ora["majority_baseline"] >= 50.0
    preds = json.loads((tmp_path / "data/predictions/strategyqa_ora_p.json").read_text())
    assert len(preds) == ora["eval_questions"] and all(isinstance(v["answer"], bool) for v in preds.values())
    ird = strategyqa_qa_flow.fn("ir_d", params_file=params)
    assert ird["eval_questions"] == n and ird["eval_empty_context"] == 0
    assert (tmp_path / "models/strategyqa_ir_d/final/config.json").exists()

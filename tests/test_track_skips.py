"""Without the published benchmark files every stage of the three tracks still runs, writes its outputs and
says it was skipped and why; a malformed file fails instead (it is a mistake, not an absence)."""

from __future__ import annotations

import json

import pytest
import yaml

from flows.benchmark_sources import benchmark_sources_flow
from flows.difficulty import difficulty_flow
from flows.quail_baselines import quail_baselines_flow
from flows.quail_mc import quail_mc_flow
from flows.strategyqa_contexts import strategyqa_contexts_flow
from flows.strategyqa_qa import strategyqa_qa_flow


def _params(tmp_path, **sources):
    base = {"strategyqa_train": "absent/train.json", "strategyqa_eval": "absent/dev.json",
            "quail_dev": "absent/quail_dev.xml", "quail_challenge": "absent/challenge.jsonl", **sources}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"benchmark_sources": base}))
    return str(tmp_path / "params.yaml")


def test_missing_sources_skip_every_stage_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    params = _params(tmp_path)
    manifest = benchmark_sources_flow.fn(params_file=params)
    assert "absent/quail_dev.xml not found" in manifest["quail_dev"]["skipped"]
    quail_baselines_flow.fn(params_file=params)
    quail_mc_flow.fn("full", params_file=params)
    difficulty_flow.fn(params_file=params)
    strategyqa_contexts_flow.fn(params_file=params)
    strategyqa_qa_flow.fn("ir_q", params_file=params)
    for path in ("metrics/quail_baselines.json", "metrics/quail_mc_full.json", "metrics/difficulty.json"):
        assert "absent/quail_dev.xml not found" in json.loads((tmp_path / path).read_text())["skipped"], path
    assert "Skipped: " in (tmp_path / "reports/quail_baselines.md").read_text()
    assert (tmp_path / "models/quail_mc_full/final/SKIPPED.txt").exists()
    skipped = json.loads((tmp_path / "metrics/strategyqa_qa_ir_q.json").read_text())["skipped"]
    assert "absent/train.json not found" in skipped
    assert (tmp_path / "models/strategyqa_ir_q/final/SKIPPED.txt").read_text().startswith("absent/train.json")


def test_a_malformed_source_fails_the_stage(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.xml").write_text("<data><text id='x'>")
    with pytest.raises(ValueError, match="broken.xml: not well-formed XML"):
        benchmark_sources_flow.fn(params_file=_params(tmp_path, quail_dev="broken.xml"))
    assert not (tmp_path / "metrics/benchmark_sources.json").exists()

"""Without the published benchmark files every stage of the three tracks still runs, writes its outputs and
says it was skipped and why; a malformed file fails instead (it is a mistake, not an absence)."""

from __future__ import annotations

import json

import pytest

from flows.benchmark_sources import benchmark_sources_flow
from flows.difficulty import difficulty_flow
from flows.quail_baselines import quail_baselines_flow
from flows.quail_mc import quail_mc_flow
from flows.strategyqa_contexts import strategyqa_contexts_flow
from flows.strategyqa_qa import strategyqa_qa_flow
from tests.params_files import write_params


def _params(tmp_path, **sources):
    base = {"strategyqa_train": "absent/train.json", "strategyqa_eval": "absent/dev.json",
            "quail_dev": "absent/quail_dev.xml", "quail_challenge": "absent/challenge.jsonl", **sources}
    write_params(tmp_path / "params.yaml", {"benchmark_sources": base})
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
    for path in ("reports/quail_baselines.json", "reports/quail_mc_full.json", "reports/difficulty.json"):
        assert "absent/quail_dev.xml not found" in json.loads((tmp_path / path).read_text())["skipped"], path
    assert "Skipped: " in (tmp_path / "reports/quail_baselines.md").read_text()
    assert (tmp_path / "models/quail_mc_full/final/SKIPPED.txt").exists()
    skipped = json.loads((tmp_path / "reports/strategyqa_qa_ir_q.json").read_text())["skipped"]
    assert "absent/train.json not found" in skipped
    assert (tmp_path / "models/strategyqa_ir_q/final/SKIPPED.txt").read_text().startswith("absent/train.json")


def test_a_malformed_source_fails_the_stage(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.xml").write_text("<data><text id='x'>")
    with pytest.raises(ValueError, match="broken.xml: not well-formed XML"):
        benchmark_sources_flow.fn(params_file=_params(tmp_path, quail_dev="broken.xml"))
    assert not (tmp_path / "reports/benchmark_sources.json").exists()


def _tiny_quail(path, texts_per_domain=5):
    """Two domains, ``texts_per_domain`` texts each, two questions per text; answer always option 0."""
    body = []
    for domain, prefix in (("news", "n"), ("fiction", "f")):
        for t in range(texts_per_domain):
            sentences = " ".join(f"Sentence {i} of text {t} says the {domain} cat sat." for i in range(3 + t))
            qs = "".join(
                f'<q id="{i}" type="{"Factual" if i == 0 else "Unanswerable"}">Where did the cat sit {i}?'
                '<a correct="True">on the mat</a><a correct="False">not enough information</a>'
                '<a correct="False">in a tree</a><a correct="False">under a car</a></q>' for i in range(2))
            body.append(f'<text domain="{domain}" id="{prefix}{t}"><text_body>{sentences}</text_body>'
                        f'<questions>{qs}</questions></text>')
    path.write_text("<data>" + "".join(body) + "</data>")


def test_difficulty_with_human_accuracies_runs_the_gap_parts(tmp_path, monkeypatch):
    """The human side end to end: the flow's gap, easy/hard subsets and per-subset ablations, on a tiny set
    with hand-made predictions (the heuristics run for real; the model stages are stood in by files)."""
    from pipeline.quail.data import load_quail
    from pipeline.quail.mc_model import VARIANTS

    monkeypatch.chdir(tmp_path)
    _tiny_quail(tmp_path / "dev.xml")
    write_params(tmp_path / "params.yaml", {
        "benchmark_sources": {"strategyqa_train": "absent.json", "strategyqa_eval": "absent.json",
                              "quail_dev": "dev.xml", "quail_challenge": "absent.jsonl"},
        "quail": {"train_share": 0.6, "seed": 1},
        "difficulty": {"human_accuracies": "humans.json", "models": ["mc_full"]},
    })
    params = str(tmp_path / "params.yaml")
    benchmark_sources_flow.fn(params_file=params)
    quail_baselines_flow.fn(params_file=params)
    from pipeline.params import load_params
    from pipeline.quail.sets import heldout_dev, quail_sets

    sets, train, _ = quail_sets(load_params(params).quail)
    held = heldout_dev(sets, train)
    assert len(held) == 8 and {q.text_id for q in held}.isdisjoint({q.text_id for q in train})
    # mc_full right on every other held-out question; humans always right -> gaps 0 (easy) and 100 (hard)
    full = {q.qid: (0 if i % 2 == 0 else 2) for i, q in enumerate(held)}
    for variant in VARIANTS:
        preds = full if variant == "full" else {q.qid: 3 for q in held}
        (tmp_path / f"data/predictions/quail/mc_{variant}.json").write_text(json.dumps({"dev_heldout": preds}))
    (tmp_path / "humans.json").write_text(json.dumps({q.qid: 1.0 for q in load_quail(tmp_path / "dev.xml")}))
    result = difficulty_flow.fn(params_file=params)
    human = result["human"]
    assert human["questions"] == 8 and human["easy"] == 4 and human["hard"] == 4 and human["mean_gap"] == 50.0
    assert result["ablations"]["dev_heldout_easy"]["full"] == 100.0
    assert result["ablations"]["dev_heldout_hard"]["full"] == 0.0
    assert set(human["easy_vs_hard"]) == {"passage_words", "fk_grade", "word_zipf"}
    rows = (tmp_path / "plots/difficulty_measures.csv").read_text().splitlines()
    assert rows[0].endswith(",gap") and len(rows) == 9 and all(r.endswith((",0.0", ",100.0")) for r in rows[1:])

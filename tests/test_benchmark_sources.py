"""The published benchmark files: a missing one fails ``benchmark_sources`` naming every missing file, where to
get it and its param, and nothing downstream runs on a partial set (one policy, the one ``dvc repro`` applies to
a missing dep); a malformed file fails naming file and record; present ones are fingerprinted."""

from __future__ import annotations

import json

import pytest

from flows.stage import stage_flow
from pipeline.stages.benchmark_sources import MissingBenchmarkFiles
from tests.params_files import project_benchmark_sources, write_params

benchmark_sources_flow, quail_baselines_flow, difficulty_flow = (
    stage_flow(name) for name in ("benchmark_sources", "quail_baselines", "difficulty"))


def _sources(shared, **overrides):
    return project_benchmark_sources(**overrides)


def _params(tmp_path, sources):
    write_params(tmp_path / "params.yaml", {"benchmark_sources": sources})
    return str(tmp_path / "params.yaml")


def test_missing_sources_fail_naming_each_and_keep_the_manifest(shared, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    manifest = tmp_path / "reports/benchmark_sources.json"
    manifest.parent.mkdir()
    manifest.write_text('{"from": "the last good run"}')
    params = _params(tmp_path, _sources(shared, quail_dev="absent/quail_dev.xml", strategyqa_eval="absent/dev.json"))
    with pytest.raises(MissingBenchmarkFiles) as err:
        benchmark_sources_flow.fn(params_file=params)
    text = str(err.value)
    assert "benchmark_sources.quail_dev: absent/quail_dev.xml not found" in text
    assert "benchmark_sources.strategyqa_eval: absent/dev.json not found" in text
    assert "github.com/text-machine-lab/quail" in text and "quail_challenge" not in text
    assert json.loads(manifest.read_text()) == {"from": "the last good run"}
    assert not (tmp_path / "metrics").exists()


def test_present_sources_are_fingerprinted(shared, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    manifest = benchmark_sources_flow.fn(params_file=_params(tmp_path, _sources(shared)))
    assert set(manifest) == {"strategyqa_train", "strategyqa_eval", "quail_dev", "quail_challenge",
                             "quail_paper_tables", "strategyqa_paragraphs"}
    assert all(len(entry["sha256"]) == 64 and "skipped" not in entry for entry in manifest.values())
    assert manifest["strategyqa_eval"]["questions"] == 229


def test_a_stage_refuses_a_manifest_without_its_file(tmp_path, monkeypatch):
    """A manifest from an older version (which recorded a missing file instead of failing) is not read as if
    the file were there."""
    import json

    from pipeline.common.manifest import source_path

    (tmp_path / "quail_dev.json").write_text(json.dumps({"path": "absent.xml", "skipped": "absent.xml not found"}))
    with pytest.raises(KeyError, match="not a checked entry for 'quail_dev'.*dvc repro benchmark_sources"):
        source_path("quail_dev", tmp_path)
    with pytest.raises(FileNotFoundError, match="quail_challenge.json missing.*dvc repro benchmark_sources"):
        source_path("quail_challenge", tmp_path)
    with pytest.raises(KeyError, match="no benchmark file named 'quail_test'"):
        source_path("quail_test", tmp_path)


def test_a_malformed_source_fails_the_stage(shared, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.xml").write_text("<data><text id='x'>")
    with pytest.raises(ValueError, match="broken.xml: not well-formed XML"):
        benchmark_sources_flow.fn(params_file=_params(tmp_path, _sources(shared, quail_dev="broken.xml")))
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


def test_difficulty_with_human_accuracies_runs_the_gap_parts(shared, tmp_path, monkeypatch):
    """The human side end to end: the flow's gap, easy/hard subsets and per-subset ablations, on a tiny set
    with hand-made predictions (the heuristics run for real; the model stages are stood in by files)."""
    from pipeline.quail.data import load_quail
    from pipeline.quail.mc_model import VARIANTS

    monkeypatch.chdir(tmp_path)
    _tiny_quail(tmp_path / "dev.xml")
    _tiny_quail(tmp_path / "challenge.xml", texts_per_domain=2)
    write_params(tmp_path / "params.yaml", {
        "benchmark_sources": _sources(shared, quail_dev="dev.xml", quail_challenge="challenge.xml"),
        "quail": {"train_share": 0.6, "seed": 1},
        "difficulty": {"human_accuracies": "humans.json", "models": ["mc_full"]},
    })
    params = str(tmp_path / "params.yaml")
    benchmark_sources_flow.fn(params_file=params)
    quail_baselines_flow.fn(params_file=params)
    from pipeline.params import load_params
    from pipeline.quail.sets import heldout_dev, quail_sets

    quail = load_params(params).quail
    sets, train = quail_sets(quail.train_share, quail.seed, quail.exclude_from_heldout)
    held = heldout_dev(sets, train)
    assert len(held) == 8 and {q.text_id for q in held}.isdisjoint({q.text_id for q in train})
    # mc_full right on every other held-out question; humans always right -> gaps 0 (easy) and 100 (hard)
    full = {q.qid: (0 if i % 2 == 0 else 2) for i, q in enumerate(held)}
    for variant in VARIANTS:
        preds = full if variant == "full" else {q.qid: 3 for q in held}
        (tmp_path / f"data/predictions/quail/mc_{variant}.json").write_text(json.dumps(
            {"seeds": [42], "runs": {"42": {"dev_heldout": preds}}}))
    (tmp_path / "humans.json").write_text(json.dumps({q.qid: 1.0 for q in load_quail(tmp_path / "dev.xml")}))
    result = difficulty_flow.fn(params_file=params)
    human = result["human"]
    assert human["questions"] == 8 and human["easy"] == 4 and human["hard"] == 4 and human["mean_gap"] == 50.0
    assert result["ablations"]["dev_heldout_easy"]["full"] == 100.0
    assert result["ablations"]["dev_heldout_hard"]["full"] == 0.0
    assert set(human["easy_vs_hard"]) == {"passage_words", "fk_grade", "word_zipf"}
    rows = (tmp_path / "plots/difficulty_measures.csv").read_text().splitlines()
    assert rows[0].endswith(",gap") and len(rows) == 9 and all(r.endswith((",0.0", ",100.0")) for r in rows[1:])

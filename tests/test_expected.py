"""The expected figures (benchmarks/expected.yaml): the committed outputs reproduce every pinned figure, a
changed output is named as not reproduced, and a paper figure outside its tolerance is reported with its reason
without failing the check."""

from __future__ import annotations

import json
import shutil

from benchmarks.expected import EXPECTED, check_row, load_rows, lookup, main


def test_the_committed_outputs_reproduce_every_pinned_figure(repo, capsys):
    assert main(["--root", str(repo)]) == 0, capsys.readouterr().out
    assert "0 pinned figure(s) not reproduced" in capsys.readouterr().out


def test_a_clone_that_built_nothing_says_its_figures_are_the_committed_ones(repo, tmp_path, capsys):
    """git keeps the figures files: a fresh clone holds the committed figures, which reproduce nothing."""
    import subprocess

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    assert main(["--root", str(clone)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"read the outputs in {clone.resolve()}; ") and "(not built here) |" in out
    assert "pinned figure(s) not checked, their stages not built here" in out


def test_a_changed_output_is_named_and_fails_the_check(repo, tmp_path, capsys):
    for row in load_rows(EXPECTED):
        (tmp_path / row["file"]).parent.mkdir(parents=True, exist_ok=True)
        if not (tmp_path / row["file"]).exists():
            shutil.copy(repo / row["file"], tmp_path / row["file"])
    pmi = tmp_path / "metrics/quail/pmi.json"
    pmi.write_text(json.dumps({**json.loads(pmi.read_text()), "acc": 45.3}))
    assert main(["--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "| quail-pmi-dev | 45.3 |" in out and "42.03 +-0: FAIL" in out and "not reproduced: quail-pmi-dev" in out


def test_a_paper_figure_outside_its_tolerance_says_why_and_does_not_fail(repo):
    row = next(r for r in load_rows(EXPECTED) if r["id"] == "strategyqa-recall10-ir-q")
    checked = check_row(row, repo)
    assert not checked.failed and "differs (near-oracle corpus" in checked.paper


def test_a_key_picks_list_items_by_a_field():
    data = {"calibration": {"checks": [{"check": "a", "value": 1.0}, {"check": "b", "value": 2.0}]}}
    assert lookup(data, "calibration.checks.[check=b].value") == 2.0
    assert lookup({"results": {"x": {"ndcg@10": 0.5}}}, "results.x.ndcg@10") == 0.5


def test_a_figure_over_seeds_gets_the_tolerance_its_spread_implies(tmp_path):
    """A mean over 3 seeds with SD 1.5: a rebuild's mean over 3 is within 3 x 1.5 x sqrt(2/3) = 3.67 points;
    4 points off fails and names the figure; a row with neither a tolerance nor an SD is refused up front."""
    import pytest

    from benchmarks.expected import ExpectedError, pinned_tolerance

    assert pinned_tolerance({"value": 44.0, "sd": 1.5, "seeds": 3}) == 3.67
    assert pinned_tolerance({"value": 44.0, "tolerance": 0}) == 0
    with pytest.raises(ExpectedError, match="neither a tolerance nor an sd"):
        pinned_tolerance({"value": 44.0})
    with pytest.raises(ExpectedError, match="at least 2 seeds"):
        pinned_tolerance({"value": 44.0, "sd": 1.5, "seeds": 1})
    (tmp_path / "m.json").write_text(json.dumps({"acc": 47.6}))
    row = {"id": "x", "what": "x", "file": "m.json", "key": "acc", "command": "c",
           "pinned": {"value": 44.0, "sd": 1.5, "seeds": 3}}
    assert check_row(row, tmp_path).failed is False
    (tmp_path / "m.json").write_text(json.dumps({"acc": 48.0}))
    checked = check_row(row, tmp_path)
    assert checked.failed and "+-3.67 (3 x SD 1.5 x sqrt(2/3)): FAIL" in checked.pinned


def test_the_no_bf16_rebuild_reads_every_precision_as_fp32_and_checks_the_trained_rows(repo):
    """benchmarks/no_bf16_rebuild.py: every training section's ``precision: auto`` becomes fp32 (what auto takes
    on a processor without native bf16), nothing else in params.yaml moves, and the rows it rebuilds are the
    trained ones (an evaluate_ stage), the seeded pins among them."""
    from benchmarks.no_bf16_rebuild import as_without_bf16, trained_rows

    text = (repo / "params.yaml").read_text(encoding="utf-8")
    changed = as_without_bf16(text)
    assert "precision: auto" not in changed and changed.count("precision: fp32") == text.count("precision: auto") >= 5
    assert changed.replace("precision: fp32", "precision: auto") == text
    rows = trained_rows(load_rows(EXPECTED))
    assert {r["command"].split()[-1] for r in rows} >= {"evaluate_span", "evaluate_quail_mc@full"}
    assert all(r["command"].split()[-1].startswith("evaluate_") for r in rows)
    assert any("sd" in r.get("pinned", {}) for r in rows)


def test_the_no_bf16_rebuild_names_each_verdict_that_moved_for_a_rebuilt_system():
    from benchmarks.no_bf16_rebuild import verdict_changes

    pair = {"eval": "test", "baseline": "random_window", "figure": "F1", "difference": 1.0, "ci95": [-1.0, 3.0]}
    committed = {"pairs": [{**pair, "system": "span_window", "verdict": "level"},
                           {**pair, "system": "longformer", "verdict": "one run"}]}
    rebuilt = {"pairs": [{**pair, "system": "span_window", "verdict": "above", "difference": 3.0, "ci95": [0.5, 5.0]},
                         {**pair, "system": "longformer", "verdict": "level"}]}  # not rebuilt: not counted
    count, changed = verdict_changes(rebuilt, committed, {"span_window"})
    assert count == 1 and changed == [{"pair": "test span_window vs random_window F1", "committed": "level",
                                       "rebuilt": "above", "difference": 3.0, "ci95": [0.5, 5.0]}]
    assert verdict_changes(committed, committed, {"span_window", "longformer"}) == (2, [])


"""Every committed GPU result names a commit in this repository and the sha256 of its per-question predictions,
or is one of the listed results from before the node recorded both (``benchmarks.gpu_provenance.LEGACY``)."""

from __future__ import annotations

import json
import subprocess

import pytest

from benchmarks.gpu_provenance import LEGACY, ROOT, problems, table


def test_the_committed_gpu_results_have_provenance_or_are_named_legacy():
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True,
                             text=True).stdout.strip()
    if shallow == "true":
        pytest.skip("a shallow clone holds no earlier commit to find a result's commit in")
    rows = table()
    assert rows and problems(rows) == []
    complete = {r["file"] for r in rows if r["commit_in_repository"] and r["prediction_digests"]}
    assert "gpu_strategyqa_cv_h100.json" in complete


def test_a_new_result_without_a_commit_here_or_digests_is_named(tmp_path):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    results = tmp_path / "results"
    results.mkdir()
    (results / "gpu_new_whole.json").write_text(json.dumps(
        {"device": "x", "source": {"commit": head}, "run": {"predictions_sha256": {"a.json": "0" * 64}}}))
    (results / "gpu_new_elsewhere.json").write_text(json.dumps(
        {"device": "x", "source": {"commit": "581fe6a932ccb637adf9ac958afa2e4eb7303e89"},
         "predictions_sha256": {"a.json": "0" * 64}}))
    (results / "gpu_new_bare.json").write_text(json.dumps({"device": "x", "source": {"commit": head}}))
    found = problems(table(results))
    assert sorted(found) == [
        "gpu_new_bare.json: no prediction digests",
        "gpu_new_elsewhere.json: no commit in this repository",
        *sorted(f"{name}: listed as legacy but not in results/" for name in LEGACY)]

"""``make reset``: the way back after an experiment. An experiment run in the workspace changes params.yaml and
the outputs (and a failed one leaves its bad value in params.yaml); one command restores both, and DVC finds
the stage up to date."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from tests.shell import run, user_env, with_prefect

def test_the_reset_summary_counts_stages_never_built_apart_from_stages_that_changed():
    from pipeline.experiments.reset_summary import classify, summary

    status = {"sample": [{"changed outs": {"data/sample": "not in cache"}}],
              "compare": [{"changed deps": {"data/splits": "deleted"}}],  # its outputs are git's; its inputs absent
              "split": [{"changed deps": {"pipeline/nlquad/split.py": "modified"}}],
              "train_span": [{"changed params": {"params.yaml": {"span_window.seed": "modified"}}}]}
    up, missing, changed = classify(status, ["check_params", "sample", "split", "train_span", "compare"])
    assert (up, missing, changed) == (["check_params"], ["sample", "compare"], ["split", "train_span"])
    line = summary(up, missing, changed)
    assert "\n" not in line and "1 of 5 stages up to date here, 2 never built on this machine" in line
    assert "2 out of date (a file, param or command differs from what dvc.lock records): split, train_span" in line
    assert summary(["a"], [], []).endswith("1 of 1 stages up to date here")


@pytest.mark.slow
@pytest.mark.timeout(900)  # runs dvc repro and dvc exp in a clone
def test_one_command_returns_params_and_outputs_after_experiments(repo, tmp_path):
    venv = Path(sys.executable).parent
    with with_prefect(user_env(VENV=str(venv.parent)), tmp_path / "prefect-home") as env:
        clone = tmp_path / "clone"
        run(["git", "clone", "-q", repo, clone], tmp_path, env)
        (clone / ".venv").symlink_to(venv.parent)  # the Makefile's venv: already set up
        run(["dvc", "repro", "sample"], clone, env)
        built = run(["git", "diff", "--stat", "--", "dvc.lock"], clone, env).stdout
        if built:  # this machine built another sample than the committed one: reset returns to what it built
            warnings.warn(f"dvc repro sample did not rebuild the committed dvc.lock's outputs here:\n{built}"
                          f"{run(['git', 'diff', '--', 'dvc.lock'], clone, env).stdout[-3000:]}")
            run(["git", "commit", "-qm", "this machine's sample", "--", "dvc.lock"], clone, env)
        warc = (clone / "data/sample/bbc.warc.gz").read_bytes()
        params = (clone / "params.yaml").read_text()
        run(["dvc", "exp", "run", "-S", "sample.n_articles=40", "sample"], clone, env)
        assert (clone / "data/sample/bbc.warc.gz").read_bytes() != warc
        failed = run(["dvc", "exp", "run", "-S", "quail.pmi_window=ten", "sample"], clone, env, check=False)
        assert failed.returncode != 0 and "ten" in (clone / "params.yaml").read_text()
        said = failed.stdout + failed.stderr  # the way back from a value -S wrote, not a stamp's checkout
        assert "`make reset` puts params.yaml" in said and "dvc checkout" not in said, said[-3000:]
        spaced = clone / "reports" / "a note with spaces.json"  # a tracked name xargs must not split
        spaced.write_text("{}\n")
        run(["git", "add", str(spaced)], clone, env)
        run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "note"], clone, env)
        spaced.write_text('{"changed": true}\n')
        reset = run(["make", "reset"], clone, env)
        assert (clone / "params.yaml").read_text() == params
        assert spaced.read_text() == "{}\n"
        restored = clone / "data/sample/bbc.warc.gz"
        assert restored.is_file(), f"make reset left no sample archive:\n{reset.stdout[-2000:]}\n{reset.stderr[-2000:]}"
        assert restored.read_bytes() == warc
        said = [line for line in reset.stdout.splitlines() if not line.startswith("make[")]  # make -w's lines
        assert said[-1].startswith("reset: params.yaml, dvc.lock and the outputs git keeps are as committed; "), \
            reset.stdout[-2000:]
        assert run(["dvc", "status", "--json", "sample"], clone, env).stdout.strip() == "{}"

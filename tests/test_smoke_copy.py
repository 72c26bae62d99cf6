"""The smoke run's scratch copy (``pipeline.experiments.smoke.scratch_copy``): the checkout's working files, as a
repository of its own, without the checkout's dvc.lock (the default profile's record, which the copy never builds)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from pipeline.experiments.smoke import scratch_copy, set_cpu_threads
from pipeline.params import ParamsError
from tests.params_files import PROJECT_PARAMS_FILE


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@localhost", "PATH": "/usr/bin:/bin"})


def test_the_copy_holds_the_working_files_but_not_the_lock(tmp_path):
    root = tmp_path / "checkout"
    root.mkdir()
    (root / ".gitignore").write_text("outputs/\n")
    (root / "dvc.yaml").write_text("stages: {}\n")
    (root / "dvc.lock").write_text("schema: '2.0'\nstages: {}\n")
    (root / "params.yaml").write_text("a: 1\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "one")
    (root / "params.yaml").write_text("a: 2\n")  # uncommitted edits travel
    (root / "new.py").write_text("x = 1\n")  # untracked files too
    (root / "outputs").mkdir()
    (root / "outputs" / "big.bin").write_text("ignored")  # git-ignored ones do not
    dest = tmp_path / "copy" / "checkout"
    dest.mkdir(parents=True)
    scratch_copy(root, dest)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")
                   if p.is_file() and p.relative_to(dest).parts[0] != ".git")
    assert files == [".gitignore", "dvc.yaml", "new.py", "params.yaml"], files
    assert (dest / "params.yaml").read_text() == "a: 2\n"
    committed = subprocess.run(["git", "ls-files"], cwd=dest, capture_output=True, text=True, check=True).stdout
    assert "dvc.lock" not in committed.split()


def test_cpu_threads_are_set_in_every_trained_section_of_the_copy_and_bounded_by_the_schema(tmp_path):
    shutil.copy(PROJECT_PARAMS_FILE, tmp_path / "params.yaml")
    keys = set_cpu_threads(tmp_path, 1)
    raw = yaml.safe_load((tmp_path / "params.yaml").read_text())
    assert keys == sorted(f"{s}.cpu_threads" for s in ("boolq_aux", "longformer", "quail_mc", "span_window",
                                                       "strategyqa_qa"))
    assert all(raw[key.split(".")[0]]["cpu_threads"] == 1 for key in keys)
    with pytest.raises(ParamsError, match="cpu_threads"):
        set_cpu_threads(tmp_path, 0)

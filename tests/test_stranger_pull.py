"""A stranger's clone: a plain ``dvc pull`` does not reach for the group's S3 store (the project ships remote
``team`` without making it the default), so it says no remote was given instead of "Unable to locate
credentials"; ``-r public`` is what the README tells them to use."""

from __future__ import annotations

import subprocess

from tests.shell import run, user_env


def test_a_plain_pull_names_no_remote_and_asks_for_no_credentials(repo, tmp_path):
    env = user_env()
    clone = tmp_path / "stranger"
    run(["git", "clone", "-q", repo, clone], tmp_path, env)
    pulled = subprocess.run(["dvc", "pull", "sample"], cwd=clone, env=env, capture_output=True, text=True,
                            timeout=120)
    said = pulled.stdout + pulled.stderr
    assert "No remote provided and no default remote set" in said, said
    assert "credentials" not in said and "s3" not in said.lower(), said
    listed = run(["dvc", "remote", "list"], clone, env).stdout
    assert "team" in listed  # the group's remote is still there, for `-r team` or a group's `dvc remote default`

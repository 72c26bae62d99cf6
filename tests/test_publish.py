"""``make publish``: a read-only HTTP remote a stranger can pull. A clone reproduces two stages and publishes
them into a folder; a static server on 127.0.0.1 serves it; a fresh clone with nothing but that URL pulls the
outputs, and DVC finds nothing to do."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.shell import run, user_env, with_prefect

STAGES = ["benchmark_sources", "discover"]  # discover needs sample upstream: a partial share pulls whole
# what docs/experiments.md and the publish command tell a reader to run (verify: DVC checks every file's hash)
PULL_COMMANDS = [["dvc", "remote", "add", "--local", "public", "<URL>"],
                 ["dvc", "remote", "modify", "--local", "public", "verify", "true"],
                 ["dvc", "pull", "-r", "public", "--with-deps", *STAGES]]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # runs dvc repro in a clone


def test_a_fresh_clone_pulls_a_published_folder_over_http(repo, shared, tmp_path):
    with with_prefect(user_env(), tmp_path / "prefect-home") as env:
        (tmp_path / "shared").symlink_to(shared.resolve())  # params name ../shared
        author, stranger, public = tmp_path / "author", tmp_path / "stranger", tmp_path / "public"
        run(["git", "clone", "-q", repo, author], tmp_path, env)
        refused = subprocess.run([sys.executable, "-m", "pipeline.experiments.publish", public, *STAGES], cwd=author,
                                 env=env, capture_output=True, text=True)
        assert refused.returncode != 0 and "dvc status is not clean" in refused.stderr  # nothing built yet
        run(["dvc", "repro", *STAGES], author, env)
        with (author / "dvc.lock").open("a") as lock:  # a workspace whose dvc.lock is not the commit's
            lock.write("# edited\n")
        refused = subprocess.run([sys.executable, "-m", "pipeline.experiments.publish", public, *STAGES], cwd=author,
                                 env=env, capture_output=True, text=True)
        assert refused.returncode != 0 and "dvc.lock differ from the commit" in refused.stderr, refused.stderr
        run(["git", "checkout", "dvc.lock"], author, env)
        said = run([sys.executable, "-m", "pipeline.experiments.publish", public, *STAGES], author, env).stdout
        assert " ".join(PULL_COMMANDS[-1]) in said  # the part published, pulled by the same stage names
        assert list((public / "files" / "md5").iterdir())

        handler = functools.partial(SimpleHTTPRequestHandler, directory=str(public))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            run(["git", "clone", "-q", repo, stranger], tmp_path, env)
            started = time.monotonic()
            url = f"http://127.0.0.1:{server.server_address[1]}"
            for command in PULL_COMMANDS:  # as the docs and the publish command print them
                run([part.replace("<URL>", url) for part in command], stranger, env)
            # nothing to rerun: the named stages and every stage upstream of them
            status = run(["dvc", "status", "--json", "--with-deps", *STAGES], stranger, env).stdout.strip()
            elapsed = time.monotonic() - started
            # a forged object on the server (a stranger's folder, a man in the middle): refused, not checked out
            forged = max((p for p in (public / "files" / "md5").rglob("*") if p.is_file() and p.suffix != ".dir"),
                         key=lambda p: p.stat().st_size)
            forged.write_bytes(b"forged " + forged.read_bytes()[7:])
            victim = tmp_path / "victim"
            run(["git", "clone", "-q", repo, victim], tmp_path, env)
            for command in PULL_COMMANDS[:-1]:
                run([part.replace("<URL>", url) for part in command], victim, env)
            pulled = subprocess.run(PULL_COMMANDS[-1], cwd=victim, env=env, capture_output=True, text=True)
        finally:
            server.shutdown()
            server.server_close()
        assert status == "{}", status
        assert pulled.returncode != 0, pulled.stdout + pulled.stderr
        victims = [p for p in victim.rglob("*") if p.is_file() and p.read_bytes().startswith(b"forged ")]
        assert not victims, victims
        assert (stranger / "data/sample/bbc.warc.gz").read_bytes() == (author / "data/sample/bbc.warc.gz").read_bytes()
        assert elapsed < 60, elapsed

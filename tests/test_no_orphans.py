"""A stage killed with -9 takes its children along: Scrapy, the pywb replay server, torchrun and its
workers. (A kill of the process group was already handled; a kill of the stage's own pid left them running,
and an orphan Scrapy plus the rerun fetched captures twice. Scrapy, whose log pipe closes with the stage,
often stops by itself too; the parent-death signal makes it certain.) And no stage starts a temporary
Prefect server of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from pipeline.sample.build import WARC_NAME
from tests.conftest import prefect_server
from tests.fake_archive import FakeArchive
from tests.params_files import PROJECT_PARAMS

pytestmark = pytest.mark.slow  # starts servers and process trees


def _descendants(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


def _kill_and_expect_no_survivors(proc: subprocess.Popen, children: list[psutil.Process], timeout: float = 30) -> None:
    assert children, "the runner had started no child"
    os.kill(proc.pid, signal.SIGKILL)  # the stage's own pid only, as `kill -9 <pid>` does
    proc.wait()
    gone, alive = psutil.wait_procs(children, timeout=timeout)
    for p in alive:  # clean up before failing
        p.kill()
    assert not alive, [(p.pid, p.cmdline()) for p in alive]


def _runner(code: str, repo: Path, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                            env=dict(os.environ, PYTHONPATH=str(repo)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _wait_for(pred, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_scrapy_dies_with_a_killed_crawl(tmp_path, repo):
    stories = [f"uk-{30000000 + i}" for i in range(40)]
    with (tmp_path / "captures.jsonl").open("w") as fh:
        for s in stories:
            fh.write(f'{{"key": "/news/{s}", "url": "https://www.bbc.co.uk/news/{s}", "timestamp": "20170101000000",'
                     f' "status": "200", "mime": "text/html", "digest": "{s}"}}\n')
    with FakeArchive({}, delay=0.5) as archive:
        proc = _runner(f"""
            from pathlib import Path
            from pipeline.crawl.run import run_crawl
            from pipeline.nlquad.page_limits import PageLimits
            from pipeline.params import project_section
            from pipeline.wayback.archive import ArchiveEndpoints
            p = project_section("crawl", requests_per_minute=0, concurrency=1, follow_depth=0, retries=1)
            out = Path({str(tmp_path)!r})
            run_crawl(out / "captures.jsonl", out / "work", out / "pages.warc.gz", out / "index.jsonl",
                      out / "failures.json", ArchiveEndpoints("{archive.base}/cdx", "{archive.base}/{{timestamp}}id_/{{url}}"),
                      p, project_section("discover"), PageLimits.of(project_section("extract")))
        """, repo, tmp_path)
        index = tmp_path / "work" / "index.jsonl"
        _wait_for(lambda: index.exists() and len(index.read_text().splitlines()) >= 2)
        children = _descendants(proc.pid)
        assert any("scrapy" in " ".join(c.cmdline()) for c in children)
        _kill_and_expect_no_survivors(proc, children)
        hits = len(archive.hits)
        time.sleep(2)
        assert len(archive.hits) <= hits + 1  # nothing goes on fetching


def test_pywb_dies_with_a_killed_stage(tmp_path, repo, small_sample):
    ready = tmp_path / "ready"
    proc = _runner(f"""
        import time
        from pathlib import Path
        from pipeline.wayback.pywb_server import LocalPywb
        with LocalPywb([Path({str(small_sample / WARC_NAME)!r})], Path({str(tmp_path / "pywb")!r}), "sample") as server:
            Path({str(ready)!r}).write_text(server.base_url)
            time.sleep(600)
    """, repo, tmp_path)
    _wait_for(ready.exists)
    children = _descendants(proc.pid)
    assert any("wayback" in " ".join(c.cmdline()) for c in children)
    _kill_and_expect_no_survivors(proc, children)


@pytest.mark.timeout(300)
def test_torchrun_and_its_workers_die_with_a_killed_stage(tmp_path, repo):
    sleeper = tmp_path / "orphan_sleeper.py"
    sleeper.write_text("import time\ntime.sleep(600)\n")
    proc = _runner(f"""
        from pathlib import Path
        from pipeline.launcher.torchrun import run_torchrun, torchrun_command
        from pipeline.launcher.torchrun import bound_store
        store = bound_store("127.0.0.1", 0)
        cmd = torchrun_command(2, 1, f"127.0.0.1:{{store.port}}", "qa-000000000000", Path("unused"))
        run_torchrun(cmd[:-3] + [{str(sleeper)!r}], "sleep")  # workers that only sleep: what matters is who stops them
    """, repo, tmp_path)

    def workers_up() -> bool:
        return sum("orphan_sleeper" in " ".join(c.cmdline()) for c in _descendants(proc.pid)) >= 3

    _wait_for(workers_up, timeout=180)  # torchrun and its two workers
    _kill_and_expect_no_survivors(proc, _descendants(proc.pid), timeout=60)


def test_a_stage_that_logs_from_a_thread_starts_no_temporary_prefect_server(tmp_path, repo):
    """The crawl forwards Scrapy's lines to the run log from a reader thread; a thread without the stage's
    context made Prefect's log shipper start "a temporary server" (every crawl ran a second server)."""
    (tmp_path / "work").mkdir()
    script = tmp_path / "forwarder.py"
    script.write_text(textwrap.dedent(f"""
        import os, sys
        from pathlib import Path
        from prefect import flow
        from flows._common import record_this_run, run_flow
        from pipeline.crawl.run import _run_scrapy

        @flow(name="forwarder")
        def forwarder_flow(params_file: str = "params.yaml") -> int:
            child = "import time\\nfor i in range(30): print('line', i, flush=True); time.sleep(0.01)"
            proc = _run_scrapy([sys.executable, "-c", child], dict(os.environ), Path({str(tmp_path / "work")!r}), 0, 1)
            return proc.returncode

        import flows._common
        flows._common.shared_api_url = lambda: os.environ["TEST_API"]  # as the shared server is found: not in env
        sys.exit(run_flow(forwarder_flow, "forwarder", params_file={str(PROJECT_PARAMS)!r}))
    """))
    (tmp_path / "prefect-home").mkdir()
    with prefect_server(tmp_path / "prefect-home") as api:
        env = dict(os.environ, TEST_API=api, PYTHONPATH=str(repo), QA_PIPELINE_NO_PROGRESS="1")
        env.pop("PREFECT_API_URL", None)
        res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "scrapy: line 29" in out and "Finished in state Completed" in out, out[-3000:]
    assert "temporary server" not in out, out[-3000:]

"""The crawl against a misbehaving archive, and killed with SIGKILL mid-way then resumed."""

from __future__ import annotations

import pytest

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pipeline.crawl.run import run_crawl
from pipeline.params import project_section
from pipeline.wayback.archive import ArchiveEndpoints
from tests.extract_helpers import LIMITS
from tests.fake_archive import FakeArchive

pytestmark = pytest.mark.slow  # starts archive servers and Scrapy

FAST = project_section("crawl", requests_per_minute=0, retries=3, backoff_base_s=0.2, backoff_max_s=3, timeout_s=2,
                   concurrency=4, follow_depth=1)


def _captures(path: Path, stories: list[str]) -> Path:
    with path.open("w") as fh:
        for s in stories:
            fh.write(json.dumps({"key": f"/news/{s}", "url": f"https://www.bbc.co.uk/news/{s}",
                                 "timestamp": "20170101000000", "status": "200", "mime": "text/html",
                                 "digest": s}) + "\n")
    return path


def _endpoints(archive: FakeArchive) -> ArchiveEndpoints:
    return ArchiveEndpoints(f"{archive.base}/cdx", archive.base + "/{timestamp}id_/{url}")


def test_faults_are_retried_with_backoff_and_final_failures_recorded(tmp_path):
    behaviours = {"uk-10000001": "429", "uk-10000002": "503", "uk-10000003": "truncated",
                  "uk-10000004": "slow", "uk-10000005": "redirect", "uk-10000006": "500"}
    stories = sorted(behaviours)
    with FakeArchive(behaviours, links={"uk-10000001": ["uk-10000007", "av/uk-10000008"]},
                     cdx={"uk-10000007": "20170105000000"}) as archive:
        stats = run_crawl(_captures(tmp_path / "captures.jsonl", stories), tmp_path / "work",
                          tmp_path / "pages.warc.gz", tmp_path / "index.jsonl", tmp_path / "failures.json",
                          _endpoints(archive), FAST, project_section("discover"), LIMITS)
    index = [json.loads(line) for line in (tmp_path / "index.jsonl").open()]
    stored = {r["key"].rsplit("/", 1)[1]: r for r in index}
    assert set(stored) == {"uk-10000001", "uk-10000002", "uk-10000003", "uk-10000004", "uk-10000005", "uk-10000007"}
    assert stored["uk-10000005"]["timestamp"] == "20180101000000"  # followed the redirect to another capture
    assert stored["uk-10000007"]["depth"] == 1 and stored["uk-10000007"]["timestamp"] == "20170105000000"
    failures = json.loads((tmp_path / "failures.json").read_text())
    assert [f["url"] for f in failures] == ["https://www.bbc.co.uk/news/uk-10000006"]
    assert "500" in failures[0]["reason"]
    assert archive.counts["uk-10000006"] == 1 + FAST.retries
    times = [t for t, p in archive.hits if "uk-10000001" in p and "cdx" not in p]
    assert times[1] - times[0] >= 0.95  # waited for Retry-After: 1
    assert archive.counts["uk-10000003"] == 2  # truncated body retried
    assert stats["stored"] == 6 and stats["failures"] == 1 and stats["stored_by_link"] == 1
    assert not any("uk-10000008" in p for _, p in archive.hits)  # /av/ link not followed


def test_a_rerun_on_stored_pages_looks_up_their_links_again(tmp_path):
    """A resumed crawl skips the pages it stored, but not their links: a link lookup that failed ("no capture in
    the time range") fails again and is listed, as in a crawl that was never stopped (a resumed run used to
    report no failures, so a fresh clone's crawl report differed from the committed one)."""
    links = {"uk-10000021": ["uk-10000023", "uk-10000024"]}
    with FakeArchive({}, links=links, cdx={"uk-10000023": "20170105000000"}) as archive:
        runs = []
        for _ in range(2):  # the second run finds every page stored
            stats = run_crawl(_captures(tmp_path / "captures.jsonl", ["uk-10000021", "uk-10000022"]),
                              tmp_path / "work", tmp_path / "pages.warc.gz", tmp_path / "index.jsonl",
                              tmp_path / "failures.json", _endpoints(archive), FAST, project_section("discover"),
                              LIMITS)
            runs.append((stats["stored"], stats["failures"], (tmp_path / "failures.json").read_text()))
    assert runs[0] == runs[1]
    failures = json.loads(runs[1][2])
    assert [(f["url"].rsplit("/", 1)[1], f["reason"]) for f in failures] == [
        ("uk-10000024", "no capture in the time range")]
    assert runs[1][0] == 3  # uk-10000023 came by link, once
    assert sum(1 for _, p in archive.hits if "cdx" not in p and "uk-10000023" in p) == 1


RUNNER = """
import sys, json
from pathlib import Path
from pipeline.crawl.run import run_crawl
from pipeline.nlquad.page_limits import PageLimits
from pipeline.params import project_section
from pipeline.wayback.archive import ArchiveEndpoints
base, work, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
p = project_section("crawl", requests_per_minute=0, concurrency=1, follow_depth=0, retries=1, backoff_base_s=0.1)
run_crawl(out / "captures.jsonl", work, out / "pages.warc.gz", out / "index.jsonl", out / "failures.json",
          ArchiveEndpoints(base + "/cdx", base + "/{timestamp}id_/{url}"), p, project_section("discover"),
          PageLimits.of(project_section("extract")))
"""


def _run(base: str, work: Path, out: Path, repo: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUNNER, base, str(work), str(out)], cwd=repo,
                            env=dict(os.environ, PYTHONPATH=str(repo)), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_sigkill_then_resume_equals_an_uninterrupted_crawl(tmp_path, repo):
    stories = [f"uk-{20000000 + i}" for i in range(24)]
    resumed, clean = tmp_path / "resumed", tmp_path / "clean"
    for d in (resumed, clean):
        d.mkdir()
        _captures(d / "captures.jsonl", stories)
    with FakeArchive({}, delay=0.25) as archive:
        proc = _run(archive.base, resumed / "work", resumed, repo)
        deadline = time.monotonic() + 120
        index = resumed / "work" / "index.jsonl"
        while time.monotonic() < deadline and (not index.exists() or len(index.read_text().splitlines()) < 6):
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its scrapy child, mid-crawl
        proc.wait()
        done_before = len(index.read_text().splitlines())
        assert 6 <= done_before < len(stories)
        hits_before = len(archive.hits)
        assert _run(archive.base, resumed / "work", resumed, repo).wait(timeout=300) == 0
        refetched = len(archive.hits) - hits_before
        assert refetched <= len(stories) - done_before + 1  # only what was missing (+ one in flight at the kill)
        assert _run(archive.base, clean / "work", clean, repo).wait(timeout=300) == 0
    assert (resumed / "pages.warc.gz").read_bytes() == (clean / "pages.warc.gz").read_bytes()
    assert len((resumed / "index.jsonl").read_text().splitlines()) == len(stories)


def test_a_redirect_off_the_archive_is_not_followed(tmp_path):
    """A replay answering 302 to another host used to be followed: the crawl fetched a page from outside
    the archive (here: the same server under another host name, so an arrival would be seen)."""
    behaviours = {"uk-10000011": "offsite", "uk-10000012": "redirect"}
    with FakeArchive(behaviours) as archive:
        stats = run_crawl(_captures(tmp_path / "captures.jsonl", sorted(behaviours)), tmp_path / "work",
                          tmp_path / "pages.warc.gz", tmp_path / "index.jsonl", tmp_path / "failures.json",
                          _endpoints(archive), FAST, project_section("discover"), LIMITS)
    stored = {json.loads(line)["key"].rsplit("/", 1)[1] for line in (tmp_path / "index.jsonl").open()}
    assert stored == {"uk-10000012"}  # a redirect to another capture of the archive is still followed
    failures = json.loads((tmp_path / "failures.json").read_text())
    assert [(f["url"].rsplit("/", 1)[1], f["reason"]) for f in failures] == [
        ("uk-10000011", "redirected off the archive to localhost: not followed")]
    assert not any(h.startswith("localhost") for h in archive.hosts), archive.hosts
    assert not any(p.startswith("/stolen/") for _, p in archive.hits)
    assert stats["stored"] == 1 and stats["failures"] == 1


def test_a_gzip_bomb_from_the_archive_is_refused_while_it_inflates():
    """The crawl's Scrapy settings cap a response at the extractor's page limit, on the wire and while it is
    decompressed (Scrapy's default is 1 GiB): 64 MiB of zeros sent as 64 KB of gzip is dropped, not held."""
    import gzip

    from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
    from scrapy.exceptions import IgnoreRequest
    from scrapy.http import Request, Response
    from scrapy.utils.test import get_crawler

    from pipeline.crawl.run import scrapy_settings
    from pipeline.params import project_section

    limit = project_section("extract").max_page_bytes
    settings = scrapy_settings(project_section("crawl"), limit)
    assert settings["DOWNLOAD_MAXSIZE"] == limit
    middleware = HttpCompressionMiddleware.from_crawler(get_crawler(settings_dict=settings))
    request = Request("http://127.0.0.1/web/2018id_/https://www.bbc.co.uk/news/uk-1")
    bomb = gzip.compress(b"\0" * (64 * 2**20))
    assert len(bomb) < limit < 64 * 2**20
    with pytest.raises(IgnoreRequest, match="exceeded DOWNLOAD_MAXSIZE"):
        middleware.process_response(request, Response(request.url, body=bomb,
                                                      headers={"Content-Encoding": "gzip"}))
    page = gzip.compress(b"<html>" + b"a" * 1000 + b"</html>")
    assert middleware.process_response(request, Response(request.url, body=page,
                                                         headers={"Content-Encoding": "gzip"})).body.startswith(b"<html>")

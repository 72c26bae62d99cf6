"""Run the spider in its own process (Twisted's reactor cannot restart within one) and finalize its output.

Settings carry all politeness and robustness: a hard average rate (``DOWNLOAD_DELAY`` = 60 / rate, with
Scrapy's ±50% jitter averaging to it), AutoThrottle on top (it only ever slows down),
retries on 408/429/5xx/timeouts/connection loss with exponential back-off honouring ``Retry-After``
(``BackoffRetryMiddleware``), and failed body reads (truncated responses) treated as errors.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import subprocess
import sys
import threading
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.common.jsonl import iter_jsonl
from pipeline.common.files import atomic_output, write_json
from pipeline.common.logs import ProgressReport, get_logger
from pipeline.common.processes import dies_with_this_process
from pipeline.common.transient import RETRYABLE_HTTP_STATUS
from pipeline.crawl.warc_store import finalize, read_index
from pipeline.crawl.config import CrawlParams
from pipeline.nlquad.config import DiscoverParams
from pipeline.wayback.archive import ArchiveEndpoints
from pipeline.wayback.cdx import user_agent

if TYPE_CHECKING:  # the spider process imports the extractor; this one only passes its limits on
    from pipeline.nlquad.page_limits import PageLimits

SPIDER = Path(__file__).with_name("spider.py")


def scrapy_settings(p: CrawlParams, max_page_bytes: int) -> dict[str, Any]:
    """``max_page_bytes``: the extractor's page limit, also the most a response may take on the wire and after
    decompression (Scrapy cancels the download or the inflation there, so a gzip bomb from a hostile archive is
    never held whole; its default is 1 GiB)."""
    delay = 60.0 / p.requests_per_minute if p.requests_per_minute else 0.0
    return {
        "DOWNLOAD_MAXSIZE": max_page_bytes,
        "DOWNLOAD_WARNSIZE": 0,
        "DOWNLOAD_DELAY": delay,
        "DOWNLOAD_DELAY_JITTER": 0.5,  # uniform in [0.5, 1.5] x delay: averages to the delay
        "CONCURRENT_REQUESTS": p.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": p.concurrency,
        "AUTOTHROTTLE_ENABLED": bool(p.autothrottle and delay),
        "AUTOTHROTTLE_START_DELAY": max(delay, 0.5),
        "AUTOTHROTTLE_MAX_DELAY": max(p.backoff_max_s, delay),
        "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0,
        "RETRY_ENABLED": True,
        "RETRY_TIMES": p.retries,
        "RETRY_HTTP_CODES": sorted(RETRYABLE_HTTP_STATUS),
        "RETRY_BACKOFF_BASE": p.backoff_base_s,
        "RETRY_BACKOFF_MAX": p.backoff_max_s,
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
            "pipeline.crawl.middleware.BackoffRetryMiddleware": 550,
            "pipeline.crawl.middleware.SameOriginRedirectMiddleware": 650,  # before RedirectMiddleware (600)
        },
        "ITEM_PIPELINES": {
            "pipeline.crawl.item_pipelines.WarcPartPipeline": 100,
            "pipeline.crawl.item_pipelines.FailureLogPipeline": 200,
        },
        "DOWNLOAD_TIMEOUT": p.timeout_s,
        "DOWNLOAD_FAIL_ON_DATALOSS": True,
        "HTTPERROR_ALLOW_ALL": True,  # the spider records final non-200s as failures
        "ROBOTSTXT_OBEY": False,  # archive replay, not the origin site
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,  # no listening sockets from a crawler
        # warnings and errors only, forwarded to the stage's log: the stage's own progress line says how far the
        # crawl is (from what is stored) and reports/crawl.json what it did; Scrapy's INFO start-up dump of
        # versions, settings and middlewares was 70 lines per crawl
        "LOG_LEVEL": "WARNING",
        "USER_AGENT": user_agent(p.contact),
    }


def _run_scrapy(cmd: list[str], env: dict[str, str], work_dir: Path, already: int, total: int) -> subprocess.Popen:
    """Scrapy in a subprocess, its log lines forwarded to the stage's logger (the Prefect UI shows them), and
    every few seconds a progress line from what is stored: captures done of the list, rate, time left."""
    log = get_logger()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=dies_with_this_process())

    def forward() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.info("scrapy: %s", line.rstrip())

    # the thread runs in this thread's context: Prefect's log shipper, started from it, must see the
    # stage's server (a thread without the context made Prefect start a temporary server of its own)
    reader = threading.Thread(target=contextvars.copy_context().run, args=(forward,), daemon=True)
    reader.start()
    report = ProgressReport("crawl", total=total, unit="captures")
    report.n = already
    while True:
        try:
            proc.wait(timeout=report.every_s)  # returns at once when scrapy exits; reads the index per line
            break
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError, ValueError):  # a part being written right now
                report.set(len(read_index(work_dir)))
    reader.join(timeout=10)
    with contextlib.suppress(OSError, ValueError):
        report.set(len(read_index(work_dir)))
    report.close()
    return proc


def run_crawl(captures: Path, work_dir: Path, out_warc: Path, out_index: Path, failures_out: Path,
              endpoints: ArchiveEndpoints, crawl: CrawlParams, discover: DiscoverParams,
              limits: PageLimits) -> dict[str, Any]:
    """Crawl what is not yet in ``work_dir`` (resuming), then write the final WARC, index and failures.
    ``limits``: the extractor's, for the links followed from a crawled page."""
    log = get_logger()
    work_dir.mkdir(parents=True, exist_ok=True)
    already = len(read_index(work_dir))
    config = {
        "captures": str(captures.resolve()), "out_dir": str(work_dir.resolve()),
        "replay_template": endpoints.replay_template, "cdx_url": endpoints.cdx_url,
        "start": discover.start.strftime("%Y%m%d"), "end": discover.end.strftime("%Y%m%d"),
        "follow_depth": crawl.follow_depth, "article_pattern": discover.article_pattern,
        "exclude_pattern": discover.exclude_pattern, "page_limits": asdict(limits),
    }
    config["settings"] = scrapy_settings(crawl, limits.max_bytes)
    cfg_path = work_dir / "spider_config.json"
    with atomic_output(cfg_path) as fh:
        fh.write(json.dumps(config, indent=1))
    (work_dir / "failures.jsonl").unlink(missing_ok=True)  # failures are re-tried on every run
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(SPIDER), "-a", f"config={cfg_path}"]
    total = sum(1 for _ in iter_jsonl(captures, "capture line"))
    log.info("crawl: %d of %d captures already stored in %s; starting scrapy", already, total, work_dir)
    env = dict(os.environ, QA_PIPELINE_CRAWL_CONFIG=str(cfg_path), PYTHONPATH=str(Path(__file__).resolve().parents[2]) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = _run_scrapy(cmd, env, work_dir, already, total)
    if proc.returncode != 0:
        raise RuntimeError(f"scrapy exited with {proc.returncode}; what it stored is kept in {work_dir}, rerun to resume")
    rows = finalize(work_dir, out_warc, out_index)
    done_keys = {r["key"] for r in rows}
    failures: dict[str, dict] = {}
    fpath = work_dir / "failures.jsonl"
    if fpath.exists():
        for row in iter_jsonl(fpath, "crawl failure line"):
            if row.get("key") not in done_keys:
                failures[row.get("key") or row.get("url")] = row
    # a JSON list, so "nothing failed" is `[]` (an empty JSON-lines file made DVC warn on every run)
    write_json(failures_out, [failures[key] for key in sorted(failures)], indent=1)
    runs_path = work_dir / "runs.jsonl"
    runs = list(iter_jsonl(runs_path, "crawl run stats line")) if runs_path.exists() else []
    return {
        "stored": len(rows),
        "stored_by_link": sum(1 for r in rows if r["depth"] > 0),
        "failures": len(failures),
        # summed over every run on this capture list, so a resumed crawl reports what the whole crawl cost
        "requests": sum(int(r.get("downloader/request_count", 0)) for r in runs),
        "retries": sum(int(r.get("retry/count", 0)) for r in runs),
        "requests_per_stored": round(sum(int(r.get("downloader/request_count", 0)) for r in runs) / len(rows), 3)
        if rows else 0.0,
        "resumed_from": already,
    }

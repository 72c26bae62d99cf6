"""``crawl`` stage: Scrapy over the frozen capture list -> ``data/raw/pages.warc.gz`` (resumable)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from prefect import flow, task

from flows._common import params_of, stage_main
from pipeline.crawl.run import run_crawl
from pipeline.runtime import write_json
from pipeline.wayback.archive import open_archive

RAW = Path("data/raw")


# No Prefect retries: Scrapy already retried each request with back-off, and a rerun resumes anyway.
@task(cache_policy=None)
def crawl_task(p) -> dict:
    captures = RAW / "captures.jsonl"
    # scratch keyed by what is crawled: the same list and settings resume, a changed one starts afresh
    key = hashlib.sha1(captures.read_bytes() + p.archive.model_dump_json().encode()
                       + p.crawl.follow_depth.to_bytes(2, "big")).hexdigest()[:12]
    with open_archive(p.archive, Path(".pywb/crawl")) as endpoints:
        return run_crawl(captures, Path("data/crawl_work") / key, RAW / "pages.warc.gz",
                         RAW / "pages.index.jsonl", RAW / "crawl_failures.jsonl", endpoints, p.crawl, p.discover)


@flow(name="crawl", log_prints=True)
def crawl_flow(params_file: str = "params.yaml") -> dict:
    p = params_of(params_file)
    stats = crawl_task(p)
    # requests per stored article: what a rate-limited live crawl pays per article
    write_json("metrics/crawl.json", {k: v for k, v in stats.items() if k != "resumed_from"})
    return stats


if __name__ == "__main__":
    sys.exit(stage_main(crawl_flow))

"""Crawl efficiency and overhead on the offline sample, served by local pywb, in one run.

- efficiency: requests made per unique article kept (target <= 1.1), beside the policy of
  wayback-machine-scraper (fetch every capture with a new digest in the range) on the same CDX list;
- overhead: pages/s through the full spider (rate limit lifted, process start included) against a plain
  sequential ``requests`` loop over the same captures (target: spider at most 1.5x slower).

    .venv/bin/python -m benchmarks.crawl_efficiency
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import requests

from benchmarks._common import write_result
from pipeline.crawl.run import run_crawl
from pipeline.nlquad.articles import extract_articles
from pipeline.nlquad.discover import discover
from pipeline.params import project_section
from pipeline.sample.build import WARC_NAME, build_sample
from pipeline.wayback.archive import ArchiveEndpoints
from pipeline.wayback.cdx import CdxClient
from pipeline.wayback.pywb_server import LocalPywb


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_sample(project_section("sample"), tmp / "sample")
        dp = project_section("discover")
        with LocalPywb([tmp / "sample" / WARC_NAME], tmp / "pywb", collection="sample") as server:
            cdx = CdxClient(f"{server.endpoint}/cdx")
            start, end = dp.start.strftime("%Y%m%d"), dp.end.strftime("%Y%m%d") + "235959"
            all_rows = [c for p in dp.url_prefixes for c in cdx.query(p, start=start, end=end, page_size=5000)]
            wms_requests = len({(c.url, c.digest) for c in all_rows})
            rows, counts = discover(cdx, dp)
            captures = tmp / "captures.jsonl"
            captures.write_text("".join(json.dumps(r) + "\n" for r in rows))
            endpoints = ArchiveEndpoints(f"{server.endpoint}/cdx", f"{server.endpoint}/{{timestamp}}id_/{{url}}")

            t = time.perf_counter()
            stats = run_crawl(captures, tmp / "work", tmp / "pages.warc.gz", tmp / "index.jsonl", tmp / "fail.jsonl",
                              endpoints, project_section("crawl", requests_per_minute=0, concurrency=4), dp)
            spider_s = time.perf_counter() - t

            session = requests.Session()
            t = time.perf_counter()
            for r in rows:
                _ = session.get(endpoints.replay(r["timestamp"], r["url"]), timeout=60).content
            loop_s = time.perf_counter() - t
        kept, _ = extract_articles(tmp / "pages.warc.gz", project_section("extract"))
    n = len(kept)
    write_result("crawl_efficiency", {
        "input": "offline sample (params.yaml sample defaults) served by pywb 2.10 on 127.0.0.1",
        "cdx_rows_in_range": len(all_rows), "articles_kept": n, "discover": counts,
        "requests_per_article": {"qa_pipeline": round(stats["requests"] / n, 3),
                                 "wayback_machine_scraper_policy": round(wms_requests / n, 3)},
        "target_requests_per_article": "<= 1.1",
        "pages_per_s": {"scrapy_spider_incl_process_start": round(len(rows) / spider_s, 1),
                        "sequential_requests_loop": round(len(rows) / loop_s, 1)},
        "spider_slowdown_vs_loop": round(spider_s / loop_s, 2), "target_slowdown": "<= 1.5",
    })


if __name__ == "__main__":
    main()

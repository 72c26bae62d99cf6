"""``crawl``: the Scrapy crawl of the discovered captures -> one WARC, its index and the final failures."""

from __future__ import annotations

from typing import TYPE_CHECKING

import hashlib
from pathlib import Path

from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.common.logs import get_logger
from pipeline.crawl.run import run_crawl
from pipeline.nlquad.page_limits import PageLimits
from pipeline.wayback.archive import open_archive

if TYPE_CHECKING:
    from pipeline.params import Params


OUTCOME = ("stored", "stored_by_link", "failures")


def run(params: Params) -> dict:
    captures, out = PATHS.discover.captures, PATHS.crawl
    # scratch keyed by what is crawled: the same list and settings resume, a changed one starts afresh
    limits = PageLimits.of(params.extract)  # links are followed from pages the extractor would read
    key = hashlib.sha1(captures.read_bytes() + params.archive.model_dump_json().encode()
                       + params.crawl.follow_depth.to_bytes(2, "big") + repr(limits).encode()).hexdigest()[:12]
    with open_archive(params.archive, Path(".pywb/crawl")) as endpoints:
        stats = run_crawl(captures, out.state / key, out.warc, out.index, out.failures, endpoints, params.crawl,
                          params.discover, limits)
    # the report holds what the outputs are, the same whether the crawl ran once or resumed; what it cost
    # (requests and retries, summed over every run that resumed this state) depends on when it was stopped, so it
    # goes to the log, and benchmarks/crawl_efficiency.py measures requests per article on a crawl from scratch
    write_json(PATHS.crawl.report, {k: stats[k] for k in OUTCOME})
    get_logger().info("crawl cost: %s", {k: v for k, v in stats.items() if k not in OUTCOME})
    return stats

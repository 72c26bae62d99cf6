"""The archive spider, run as ``python -m scrapy runspider pipeline/crawl/spider.py -a config=FILE``.

It fetches every capture in the frozen list in raw ``id_`` mode, skipping those a previous (killed) run
already stored (whose links it follows again from the stored page, so a resumed crawl looks up, and fails on,
the same links as one that was never stopped), and follows links in article bodies to other BBC News
articles: each new article is looked up in the CDX index for the capture nearest the linking page's date
inside the time range, then fetched, up to ``follow_depth`` hops. Politeness, retries and caching are Scrapy
settings (see ``pipeline/crawl/run.py``). The spider stores nothing itself: it yields a capture item per fetched
page and a failure item (with its reason) per capture that still fails after the last retry, and the item
pipelines in ``pipeline/crawl/item_pipelines.py`` write them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import urlencode

import scrapy

from pipeline.common.jsonl import iter_jsonl
from pipeline.crawl.item_pipelines import CAPTURE, FAILURE
from pipeline.crawl.warc_store import read_body, read_index
from pipeline.nlquad.bbc_urls import article_key
from pipeline.nlquad.discover import classify_path
from pipeline.nlquad.extract import extract_page
from pipeline.nlquad.page_limits import PageLimits
from pipeline.wayback.archive import ArchiveEndpoints
from pipeline.wayback.cdx import parse_cdx_json

_TS_IN_URL = re.compile(r"/(\d{14})id_/")


class ArchiveSpider(scrapy.Spider):
    name = "archive"

    @classmethod
    def update_settings(cls, settings):
        """Scrapy settings come from the run's config file (``pipeline/crawl/run.py``), typed as JSON."""
        super().update_settings(settings)
        path = os.environ.get("QA_PIPELINE_CRAWL_CONFIG")
        if path:
            settings.setdict(json.loads(Path(path).read_text(encoding="utf-8"))["settings"], priority="spider")

    def __init__(self, config: str, **kwargs):
        super().__init__(**kwargs)
        self.cfg = json.loads(Path(config).read_text(encoding="utf-8"))
        self.out_dir = Path(self.cfg["out_dir"])
        self.endpoints = ArchiveEndpoints(self.cfg["cdx_url"], self.cfg["replay_template"])
        self.done = read_index(self.out_dir)
        self.known: set[str] = set(self.done)
        self.limits = PageLimits(**self.cfg["page_limits"])

    async def start(self):
        rows = list(iter_jsonl(self.cfg["captures"], "capture line"))
        self.known.update(r["key"] for r in rows)
        for key in sorted(self.done):  # stored by an earlier run: their links, in a fixed order
            row = self.done[key]
            if row["depth"] < self.cfg["follow_depth"]:
                for request in self._follow(read_body(self.out_dir, row), row["url"], row["timestamp"], row["depth"]):
                    yield request
        for row in rows:
            if row["key"] in self.done:
                continue
            yield scrapy.Request(self.endpoints.replay(row["timestamp"], row["url"]), callback=self.parse_capture,
                                 errback=self.on_error, meta={"capture": row, "hops": 0}, dont_filter=True)

    def parse_capture(self, response):
        cap = response.meta["capture"]
        if response.meta.get("offsite_redirect"):
            yield self._failure(cap, f"redirected off the archive to {response.meta['offsite_redirect']}: not followed")
            return
        if response.status != 200:
            yield self._failure(cap, f"HTTP {response.status} after retries")
            return
        match = _TS_IN_URL.search(response.url)  # a redirect to another capture changes the timestamp
        timestamp = match.group(1) if match else cap["timestamp"]
        ctype = response.headers.get("Content-Type", b"text/html").decode("latin-1")
        yield {"kind": CAPTURE, "key": cap["key"], "url": cap["url"], "timestamp": timestamp, "content_type": ctype,
               "body": response.body, "hops": response.meta["hops"]}
        if response.meta["hops"] < self.cfg["follow_depth"]:
            yield from self._follow(response.body, cap["url"], timestamp, response.meta["hops"])

    def _follow(self, body: bytes, url: str, timestamp: str, hops: int):
        """CDX lookups for the BBC News articles a page at ``hops`` links to that no one has asked for yet."""
        for link in extract_page(body, url, self.limits).links:
            key = article_key(link)
            if key in self.known or classify_path(key, self.cfg["article_pattern"], self.cfg["exclude_pattern"]):
                continue
            self.known.add(key)
            query = urlencode({"url": link.split("://", 1)[-1], "output": "json", "from": self.cfg["start"],
                               "to": self.cfg["end"], "filter": "statuscode:200", "closest": timestamp,
                               "sort": "closest", "limit": 1})
            yield scrapy.Request(f"{self.cfg['cdx_url']}?{query}", callback=self.parse_lookup,
                                 errback=self.on_error, dont_filter=True,
                                 meta={"capture": {"key": key, "url": link, "timestamp": timestamp},
                                       "hops": hops + 1, "lookup": True})

    def parse_lookup(self, response):
        cap = response.meta["capture"]
        if response.meta.get("offsite_redirect"):
            yield self._failure(cap, f"CDX lookup redirected off the archive to {response.meta['offsite_redirect']}",
                                lookup=True)
            return
        if response.status != 200:
            yield self._failure(cap, f"CDX lookup HTTP {response.status} after retries")
            return
        caps, _ = parse_cdx_json(response.text)
        in_range = [c for c in caps if c.status == "200" and self.cfg["start"] <= c.timestamp[:8] <= self.cfg["end"]]
        if not in_range:
            yield self._failure(cap, "no capture in the time range", lookup=True)
            return
        target = int(cap["timestamp"])
        best = min(in_range, key=lambda c: (abs(int(c.timestamp) - target), c.timestamp))
        row = {"key": cap["key"], "url": best.url, "timestamp": best.timestamp}
        yield scrapy.Request(self.endpoints.replay(best.timestamp, best.url), callback=self.parse_capture,
                             errback=self.on_error, meta={"capture": row, "hops": response.meta["hops"]},
                             dont_filter=True)

    def on_error(self, failure):
        request = failure.request
        yield self._failure(request.meta.get("capture", {"url": request.url}), repr(failure.value)[:300])

    @staticmethod
    def _failure(cap: dict, reason: str, lookup: bool = False) -> dict:
        return {"kind": FAILURE, "key": cap.get("key"), "url": cap.get("url"), "timestamp": cap.get("timestamp"),
                "reason": reason, "link_lookup": lookup}

    def closed(self, reason):
        stats = self.crawler.stats.get_stats()
        with open(self.out_dir / "runs.jsonl", "a", encoding="utf-8") as fh:  # one line per (resumed) run
            fh.write(json.dumps({k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in stats.items()},
                                sort_keys=True) + "\n")

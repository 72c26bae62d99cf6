"""Scrapy item pipelines: where the spider's items are stored. The spider only fetches and decides; fetched
captures go to the resumable WARC parts (``WarcPartPipeline``), final failures to ``failures.jsonl``
(``FailureLogPipeline``). Both read the run's work folder from the spider's config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.crawl.warc_store import PartWriter

CAPTURE, FAILURE = "capture", "failure"


class WarcPartPipeline:
    """Appends each fetched capture to a new WARC part of this run; a killed run loses at most the record being
    written (``read_index`` ignores a torn tail), so the next run resumes from what is complete."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.writer: PartWriter | None = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_item(self, item: dict[str, Any]) -> dict[str, Any]:
        if item.get("kind") != CAPTURE:
            return item
        if self.writer is None:  # opened on the first capture: a run that fetches nothing adds no empty part
            self.writer = PartWriter(Path(self.crawler.spider.cfg["out_dir"]))
        self.writer.write(item["key"], item["url"], item["timestamp"], 200, item["content_type"], item["body"],
                          item["hops"])
        return item

    def close_spider(self) -> None:
        if self.writer is not None:
            self.writer.close()


class FailureLogPipeline:
    """One JSON line per capture that failed after every retry, flushed at once (a kill keeps what was seen)."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.fh = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def open_spider(self) -> None:
        self.fh = open(Path(self.crawler.spider.cfg["out_dir"]) / "failures.jsonl", "a", encoding="utf-8")

    def process_item(self, item: dict[str, Any]) -> dict[str, Any]:
        if item.get("kind") != FAILURE:
            return item
        row = {k: item[k] for k in ("key", "url", "timestamp", "reason", "link_lookup")}
        self.fh.write(json.dumps(row, sort_keys=True) + "\n")
        self.fh.flush()
        return item

    def close_spider(self) -> None:
        if self.fh is not None:
            self.fh.close()

"""``discover``: CDX discovery of article captures -> the captures list."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from pathlib import Path

from pipeline.common.layout import PATHS
from pipeline.common.files import atomic_output, write_json
from pipeline.nlquad.discover import discover
from pipeline.wayback.archive import open_archive
from pipeline.wayback.cdx import CdxClient, retrying_session

if TYPE_CHECKING:
    from pipeline.params import Params



def run(params: Params) -> dict:
    with open_archive(params.archive, Path(".pywb/discover")) as endpoints:
        client = CdxClient(endpoints.cdx_url, retrying_session(contact=params.crawl.contact))
        rows, counts = discover(client, params.discover)
    with atomic_output(PATHS.discover.captures) as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    write_json(PATHS.discover.report, counts)
    return counts

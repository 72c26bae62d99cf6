"""One way to reach an archive, live or local: CDX URL plus ``id_`` replay template."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.wayback.config import ArchiveParams
from pipeline.wayback.pywb_server import LocalPywb


@dataclass(frozen=True)
class ArchiveEndpoints:
    cdx_url: str
    replay_template: str  # with {timestamp} and {url}

    def replay(self, timestamp: str, url: str) -> str:
        """Raw capture bytes: the ``id_`` flag asks for the archived response without rewriting."""
        return self.replay_template.format(timestamp=timestamp, url=url)


@contextlib.contextmanager
def open_archive(params: ArchiveParams, workdir: Path) -> Iterator[ArchiveEndpoints]:
    """For ``endpoint: local`` start pywb over ``local_warcs`` for the duration; otherwise just the URLs."""
    if params.endpoint == "local":
        with LocalPywb([Path(w) for w in params.local_warcs], workdir, params.collection) as server:
            yield ArchiveEndpoints(f"{server.endpoint}/cdx", f"{server.endpoint}/{{timestamp}}id_/{{url}}")
    else:
        base = params.endpoint.rstrip("/")
        yield ArchiveEndpoints(f"{base}/cdx/search/cdx", f"{base}/web/{{timestamp}}id_/{{url}}")

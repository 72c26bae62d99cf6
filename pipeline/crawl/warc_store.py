"""Crash-safe WARC output for a crawl that may be killed at any moment.

Each fetched capture is written as one gzip member appended to this process's part file, fsynced, and only
then listed in ``index.jsonl`` (offset and length). A SIGKILL can leave a partial member at the end of a
part file, but never an index line pointing at one, so on restart the index says exactly what is done.
``finalize`` copies the indexed members, sorted by article key, into one WARC: the same bytes whether the
crawl ran once or was killed and resumed many times.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pipeline.common.files import atomic_output

NAMESPACE = uuid.UUID("6f1d1c5e-2b2a-4c5e-9a57-3d0f3f0a9b11")


def record_bytes(url: str, timestamp: str, status: int, content_type: str, body: bytes) -> bytes:
    """One gzipped WARC response record; ids and dates derive from (url, timestamp), so bytes repeat."""
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    http = StatusAndHeaders(f"{status} {'OK' if status == 200 else 'Archived'}",
                            [("Content-Type", content_type), ("Content-Length", str(len(body)))],
                            protocol="HTTP/1.1")
    date = f"{timestamp[0:4]}-{timestamp[4:6]}-{timestamp[6:8]}T{timestamp[8:10]}:{timestamp[10:12]}:{timestamp[12:14]}Z"
    rec = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http, warc_headers_dict={
        "WARC-Date": date, "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(NAMESPACE, url + '@' + timestamp)}>"})
    writer.write_record(rec)
    return buf.getvalue()


class PartWriter:
    def __init__(self, out_dir: Path):
        self.parts = out_dir / "parts"
        self.parts.mkdir(parents=True, exist_ok=True)
        self.index_path = out_dir / "index.jsonl"
        self.name = f"part-{os.getpid()}-{uuid.uuid4().hex[:8]}.warc.gz"
        self.fh = open(self.parts / self.name, "ab")
        self.index = open(self.index_path, "a", encoding="utf-8")

    def write(self, key: str, url: str, timestamp: str, status: int, content_type: str, body: bytes,
              depth: int) -> None:
        data = record_bytes(url, timestamp, status, content_type, body)
        offset = self.fh.tell()
        self.fh.write(data)
        self.fh.flush()
        os.fsync(self.fh.fileno())
        row = {"key": key, "url": url, "timestamp": timestamp, "status": status, "depth": depth,
               "file": self.name, "offset": offset, "length": len(data), "sha1": hashlib.sha1(body).hexdigest()}
        self.index.write(json.dumps(row, sort_keys=True) + "\n")
        self.index.flush()
        os.fsync(self.index.fileno())

    def close(self) -> None:
        self.fh.close()
        self.index.close()


def read_index(out_dir: Path) -> dict[str, dict]:
    """Completed captures by article key; a torn last line (killed mid-write) is ignored."""
    done: dict[str, dict] = {}
    path = out_dir / "index.jsonl"
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        part = out_dir / "parts" / row["file"]
        if part.exists() and part.stat().st_size >= row["offset"] + row["length"]:
            done.setdefault(row["key"], row)
    return done


def read_body(out_dir: Path, row: dict) -> bytes:
    """The HTTP body of one completed capture (a ``read_index`` row): what a resumed crawl re-reads to follow
    the page's links again, so a resumed crawl looks up the same links as one that was never stopped."""
    from warcio.archiveiterator import ArchiveIterator

    with open(out_dir / "parts" / row["file"], "rb") as fh:
        fh.seek(row["offset"])
        data = fh.read(row["length"])
    for record in ArchiveIterator(io.BytesIO(data)):
        if record.rec_type == "response":
            return record.content_stream().read()
    raise ValueError(f"{out_dir / 'parts' / row['file']} at {row['offset']}: no WARC response record")


def finalize(out_dir: Path, warc_path: Path, index_out: Path) -> list[dict]:
    """Write the sorted, de-duplicated WARC and its index (offsets into the final file)."""
    done = read_index(out_dir)
    rows = []
    tmp = warc_path.with_suffix(".part")
    with open(tmp, "wb") as out:
        for key in sorted(done):
            row = done[key]
            with open(out_dir / "parts" / row["file"], "rb") as fh:
                fh.seek(row["offset"])
                data = fh.read(row["length"])
            rows.append({k: row[k] for k in ("key", "url", "timestamp", "status", "depth", "sha1")}
                        | {"offset": out.tell(), "length": len(data)})
            out.write(data)
        out.flush()
        os.fsync(out.fileno())
    with atomic_output(index_out) as fh:  # the index first: a WARC never stands beside a stale index
        for r in rows:
            fh.write(json.dumps(r, sort_keys=True) + "\n")
    os.replace(tmp, warc_path)
    return rows

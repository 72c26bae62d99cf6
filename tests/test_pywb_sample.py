"""pywb serves the sample WARC on 127.0.0.1: CDX by URL prefix and time range, raw ``id_`` replay."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import urllib.parse
import urllib.request

import pytest
from warcio.archiveiterator import ArchiveIterator

from pipeline.sample.build import WARC_NAME
from pipeline.wayback.pywb_server import LocalPywb

pytestmark = pytest.mark.slow  # starts pywb


@pytest.fixture(scope="module")
def pywb(small_sample, tmp_path_factory):
    with LocalPywb([small_sample / WARC_NAME], tmp_path_factory.mktemp("pywb"), collection="sample") as server:
        yield server


def _cdx(server, **query) -> list[dict]:
    url = f"{server.endpoint}/cdx?" + urllib.parse.urlencode({**query, "output": "json"}, doseq=True)
    with urllib.request.urlopen(url, timeout=30) as r:
        return [json.loads(line) for line in r.read().decode().splitlines() if line.strip()]


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets in LISTEN state on ``port``, from the kernel's own tables."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as fh:
            for line in fh.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                addr, port_hex = local.rsplit(":", 1)
                if state == "0A" and int(port_hex, 16) == port:  # 0A = LISTEN
                    found.add(str(ipaddress.ip_address(bytes.fromhex(addr)[::-1])) if len(addr) == 8 else addr)
    return found


def test_binds_loopback_only(pywb):
    """What the kernel says is listening on the server's port, not the URL the helper built."""
    port = urllib.parse.urlsplit(pywb.base_url).port
    assert _cdx(pywb, url="www.bbc.co.uk/news/", matchType="prefix")  # it answers on loopback
    assert _listening_addresses(port) == {"127.0.0.1"}


def test_cdx_prefix_and_time_range(pywb, small_sample):
    truth = [json.loads(line) for line in (small_sample / "captures.jsonl").open()]
    prefix = "www.bbc.co.uk/news/"
    expected = sorted(
        (r["url"], r["timestamp"]) for r in truth
        if r["url"].split("://", 1)[1].startswith(prefix) and "20170101" <= r["timestamp"][:8] <= "20181231"
    )
    rows = _cdx(pywb, url=prefix, matchType="prefix", **{"from": "2017", "to": "2018"})
    got = sorted((r["url"], r["timestamp"]) for r in rows)
    assert got == expected and len(got) > 5
    assert all("www.bbc.com" not in u for u, _ in got)


def test_cdx_filters_status_and_collapses_digests(pywb, small_sample):
    truth = [json.loads(line) for line in (small_sample / "captures.jsonl").open()]
    everything = _cdx(pywb, url="www.bbc.co.uk/news/", matchType="prefix")
    assert len(everything) == sum(r["url"].split("://", 1)[1].startswith("www.bbc.co.uk/news/") for r in truth)
    ok = _cdx(pywb, url="www.bbc.co.uk/news/", matchType="prefix", filter=["statuscode:200", "mime:text/html"])
    assert {r["status"] for r in ok} == {"200"} and len(ok) == len(everything) - 2  # the 301 and the 404
    # byte-identical re-captures share a digest. pywb ignores the Internet Archive's `collapse=digest`
    # (it only knows collapseTime), so the discover stage must also collapse digests itself.
    per_url: dict[str, list[str]] = {}
    for r in everything:
        per_url.setdefault(r["url"], []).append(r["digest"])
    assert any(len(d) > len(set(d)) for d in per_url.values())
    assert any(len(set(d)) > 1 for d in per_url.values())  # and later edits do not
    collapsed = _cdx(pywb, url="www.bbc.co.uk/news/", matchType="prefix", collapse="digest")
    assert len(collapsed) == len(everything)


def test_raw_id_replay_returns_stored_bytes(pywb, small_sample):
    with (small_sample / WARC_NAME).open("rb") as fh:
        stored = [(r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-Date"),
                   r.http_headers.get_statuscode(), r.content_stream().read()) for r in ArchiveIterator(fh)]
    checked = 0
    for url, date, status, body in stored[::5]:
        if status != "200":
            continue
        ts = date.replace("-", "").replace(":", "").replace("T", "").rstrip("Z")
        with urllib.request.urlopen(f"{pywb.endpoint}/{ts}id_/{url}", timeout=30) as r:
            assert r.status == 200
            assert r.read() == body, url
        checked += 1
    assert checked >= 5

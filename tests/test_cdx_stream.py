"""The CDX client reads a reply a line at a time: a server that ignores ``limit`` and answers with a
million rows (or one endless line) cannot make discover hold it whole."""

from __future__ import annotations

import json
import threading
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.wayback.cdx import CdxClient, CdxFormatError, parse_cdx_json, retrying_session

pytestmark = pytest.mark.slow  # starts pywb

ROW = {"urlkey": "uk,co,bbc)/news/uk-{i}", "timestamp": "20170101000000", "url": "https://www.bbc.co.uk/news/uk-{i}",
       "mime": "text/html", "status": "200", "digest": "D{i}"}


class _Server:
    def __init__(self, body_lines, total: int):
        lines, size = body_lines, total
        self.agents: list[str] = []
        agents = self.agents

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                agents.append(self.headers.get("User-Agent", ""))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if size is not None:
                    self.send_header("Content-Length", str(size))
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for line in lines():
                        self.wfile.write(line)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/cdx"

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _pywb_lines(n: int):
    template = json.dumps(ROW) + "\n"
    return lambda: (template.replace("{i}", str(i)).encode() for i in range(n))


def test_a_huge_reply_is_streamed_not_held(tmp_path):
    n = 200_000
    size = sum(len(x) for x in _pywb_lines(n)())
    assert size > 30_000_000
    with _Server(_pywb_lines(n), size) as url:
        client = CdxClient(url, retrying_session(total=0))
        tracemalloc.start()
        seen = 0
        for cap in client.query("www.bbc.co.uk/news/", page_size=5000):
            seen += 1
            assert cap.status == "200"
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert seen == n
    assert peak < 10_000_000, peak  # the reply is > 30 MB; held whole it would be several times that


def test_an_endless_line_is_an_error_not_a_memory_grab():
    blob = b'{"url": "' + b"x" * 3_000_000 + b'"}\n'
    with _Server(lambda: iter([blob]), len(blob)) as url:
        with pytest.raises(CdxFormatError, match="longer than"):
            list(CdxClient(url, retrying_session(total=0)).query("www.bbc.co.uk/news/", page_size=5000))


def test_internet_archive_rows_one_per_line_and_on_one_line_agree():
    header = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]
    rows = [header, ["k", "20170101000000", "http://www.bbc.co.uk/news/uk-1", "text/html", "200", "A", "1"],
            ["k", "20170102000000", "http://www.bbc.co.uk/news/uk-2", "text/html", "200", "B", "1"], [], ["key"]]
    one_line = json.dumps(rows)
    per_line = "[" + ",\n".join(json.dumps(r) for r in rows) + "]\n"
    assert parse_cdx_json(one_line) == parse_cdx_json(per_line)
    caps, resume = parse_cdx_json(per_line)
    assert [c.url for c in caps] == ["http://www.bbc.co.uk/news/uk-1", "http://www.bbc.co.uk/news/uk-2"]
    assert resume == "key"
    with pytest.raises(CdxFormatError, match="not a CDX JSON"):
        parse_cdx_json("<html>rate limited</html>")


def test_the_cdx_client_says_who_is_asking():
    """Archives ask research crawlers for a contact: crawl.contact goes into the CDX client's User-Agent too."""
    server = _Server(_pywb_lines(1), sum(len(x) for x in _pywb_lines(1)()))
    with server as url:
        list(CdxClient(url, retrying_session(total=0, contact="mailto:me@example.org")).query("www.bbc.co.uk/news/", page_size=5000))
    assert server.agents and "+mailto:me@example.org" in server.agents[0] and "github.com/)" not in server.agents[0]


class _Redirector:
    """A CDX endpoint that answers every query with a redirect to ``location(port)``."""

    def __init__(self, location):
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                hits.append(self.path)
                if self.path.startswith("/moved"):
                    body = (json.dumps(list(ROW)) + "\n").encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(302)
                self.send_header("Location", location(self.server.server_address[1]) + "?" + self.path.split("?", 1)[-1])
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.port = self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_a_redirect_to_another_host_is_not_followed():
    other = _Server(lambda: iter([b"[]\n"]), 3)
    with other as other_url:
        away = _Redirector(lambda port: other_url)
        home = _Redirector(lambda port: f"http://127.0.0.1:{port}/moved")
        try:
            with pytest.raises(CdxFormatError, match="redirected to another host"):
                list(CdxClient(f"http://127.0.0.1:{away.port}/cdx").query("bbc.co.uk/news/", page_size=10))
            assert other.agents == []  # the other host got nothing
            caps = list(CdxClient(f"http://127.0.0.1:{home.port}/cdx").query("bbc.co.uk/news/", page_size=10))
            assert caps == [] and home.hits[-1].startswith("/moved?")  # same host: followed, query kept
        finally:
            away.close()
            home.close()


def test_retry_after_is_capped():
    from pipeline.wayback.cdx import MAX_RETRY_AFTER_S

    retry = retrying_session().get_adapter("http://x").max_retries
    assert retry.parse_retry_after("100000") == MAX_RETRY_AFTER_S and retry.parse_retry_after("3") == 3


def test_an_endless_reply_stops_at_a_bound():
    """A server that streams rows without end: the page stops at 50 times the rows asked for."""
    def endless():
        template = json.dumps(ROW) + "\n"
        i = 0
        while True:
            yield template.replace("{i}", str(i)).encode()
            i += 1

    with _Server(endless, 10**12) as url:
        tracemalloc.start()
        with pytest.raises(CdxFormatError, match="50 times what the query asked for"):
            for _ in CdxClient(url, retrying_session(total=0)).query("www.bbc.co.uk/news/", page_size=100):
                pass
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 10_000_000, peak


def test_a_dripping_reply_stops_at_the_page_deadline():
    """One byte every half second never trips the socket's idle timeout; the page's deadline stops it."""
    import time

    def drip():
        while True:
            yield b" "
            time.sleep(0.5)

    with _Server(drip, 10**9) as url:
        started = time.monotonic()
        with pytest.raises(CdxFormatError, match="took longer than 2 s"):
            list(CdxClient(url, retrying_session(total=0), timeout=5, page_deadline_s=2).query(
                "www.bbc.co.uk/news/", page_size=100))
        assert time.monotonic() - started < 10


def test_a_row_without_its_url_or_timestamp_is_a_clear_error():
    with pytest.raises(CdxFormatError, match="without its url or timestamp"):
        parse_cdx_json('{"timestamp": "20170101000000"}')
    with pytest.raises(CdxFormatError, match="without its url or timestamp"):
        parse_cdx_json('[["urlkey", "original"], ["k", "http://www.bbc.co.uk/news/uk-1"]]')
    with pytest.raises(CdxFormatError, match="url, timestamp is not text"):  # discover died later with TypeError
        parse_cdx_json('{"url": 5, "timestamp": 7}')


def _ia_page(start: int, rows: int, resume: str) -> bytes:
    """An Internet Archive JSON page of ``rows`` captures and a resume key."""
    head = '[["urlkey","timestamp","original","mimetype","statuscode","digest"],\n'
    body = "".join(f'["k{i}","20170101000000","https://www.bbc.co.uk/news/uk-{i}","text/html","200","D{i}"],\n'
                   for i in range(start, start + rows))
    return (head + body + f'[],\n["{resume}"]]\n').encode()


def test_a_server_that_keeps_sending_new_resume_keys_stops_at_the_page_and_row_caps():
    """Each page is under its own cap, but the pages never end: the query stops at its page cap, and at its
    total-rows cap, whichever comes first, naming it."""
    served = [0]

    def pages():
        served[0] += 1
        yield _ia_page(served[0] * 10, 10, f"key-{served[0]}")

    with _Server(pages, None) as url:
        client = CdxClient(url, retrying_session(total=0))
        with pytest.raises(CdxFormatError, match="more than 5 CDX pages"):
            list(client.query("www.bbc.co.uk/news/", page_size=10, max_pages=5))
        with pytest.raises(CdxFormatError, match="more than 25 CDX rows"):
            list(client.query("www.bbc.co.uk/news/", page_size=10, max_rows=25))

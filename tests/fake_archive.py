"""A loopback-only fake Wayback archive that misbehaves on purpose: 429 with Retry-After, 503s, truncated
bodies, slow answers, redirects to other captures, permanent 500s. Each page's behaviour is keyed by its
story id; ``hits`` records every request so tests can check timing and what was (re)fetched."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def page(story: str, links: list[str] = ()) -> bytes:
    body = "".join(f'<p>Paragraph {i} of story {story} with enough words to count as prose here.</p>' for i in range(4))
    body += "".join(f'<p>See <a href="/news/{link}">the related story {link} here</a> for more.</p>' for link in links)
    return (f'<html><head><link rel="canonical" href="https://www.bbc.co.uk/news/{story}"></head><body>'
            f'<div class="story-body"><h1 class="story-body__h1">Story {story}</h1><div class="story-body__inner">'
            f'{body}<h2 class="story-body__crosshead">What next?</h2><p>An answer about {story}.</p>'
            f'</div></div></body></html>').encode()


class FakeArchive:
    def __init__(self, behaviours: dict[str, str], links: dict[str, list[str]] | None = None,
                 cdx: dict[str, str] | None = None, delay: float = 0.0):
        self.behaviours, self.links, self.cdx, self.delay = behaviours, links or {}, cdx or {}, delay
        self.hits: list[tuple[float, str]] = []
        self.hosts: list[str] = []  # Host header of every request
        self.counts: dict[str, int] = {}
        archive = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                archive.handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        self.hits.append((time.monotonic(), h.path))
        self.hosts.append(h.headers.get("Host", ""))
        if h.path.startswith("/cdx"):
            q = parse_qs(urlsplit(h.path).query)
            story = q["url"][0].rstrip("/").rsplit("/", 1)[-1]
            ts = self.cdx.get(story)
            text = json.dumps({"url": f"https://www.bbc.co.uk/news/{story}", "timestamp": ts, "status": "200",
                               "mime": "text/html", "digest": story}) + "\n" if ts else ""
            return self._send(h, 200, text.encode(), "application/json")
        ts, url = h.path[1:].split("id_/", 1)
        story = url.rstrip("/").rsplit("/", 1)[-1]
        n = self.counts[story] = self.counts.get(story, 0) + 1
        kind = self.behaviours.get(story, "ok")
        if self.delay:
            time.sleep(self.delay)
        if kind == "429" and n == 1:
            return self._send(h, 429, b"slow down", headers={"Retry-After": "1"})
        if kind == "503" and n <= 2:
            return self._send(h, 503, b"busy")
        if kind == "500":
            return self._send(h, 500, b"broken")
        if kind == "slow" and n == 1:
            time.sleep(3)
        if kind == "offsite":  # same server, another host name: what a hostile replay would point to
            h.send_response(302)
            h.send_header("Location", f"http://localhost:{self.server.server_address[1]}/stolen/{story}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if kind == "redirect" and "20180101000000" not in ts:
            h.send_response(302)
            h.send_header("Location", f"/20180101000000id_/{url}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        body = page(story, self.links.get(story, []))
        if kind == "truncated" and n == 1:
            h.send_response(200)
            h.send_header("Content-Type", "text/html")
            h.send_header("Content-Length", str(len(body) + 500))
            h.end_headers()
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            h.close_connection = True
            return
        self._send(h, 200, body)

    @staticmethod
    def _send(h, status, body, ctype="text/html", headers=None):
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

"""``python -m pipeline.experiments.extract_page PAGE.html [PAGE.html ...]``: what the extractor makes of any
page, with the project's own page limits (``params.yaml``'s ``extract`` section, as the extract stage uses them).
The page's URL is taken from its canonical link or ``og:url``. A tool above the library: the extractor itself
reads no params."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bs4 import BeautifulSoup, SoupStrainer

from pipeline.nlquad.extract import extract_page
from pipeline.nlquad.page_limits import PageLimits
from pipeline.params import project_section


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.experiments.extract_page",
                                 description="What the extractor makes of saved BBC pages, as JSON (the URL is taken "
                                             "from each page's canonical link or og:url).")
    ap.add_argument("pages", nargs="+", metavar="PAGE.html", help="a saved page")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    limits = PageLimits.of(project_section("extract"))
    status = 0
    for name in args.pages:
        path = Path(name)
        try:
            html = path.read_bytes()
        except OSError as exc:
            print(f"{name}: cannot read: {exc}", file=sys.stderr)
            status = 1
            continue
        head = BeautifulSoup(html, "lxml", parse_only=SoupStrainer(["link", "meta"]))
        canonical = head.find("link", rel="canonical")
        og = head.find("meta", attrs={"property": "og:url"})
        url = (canonical.get("href") if canonical else None) or (og.get("content") if og else None)
        result = extract_page(html, url, limits)
        print(json.dumps({"file": name, **result.to_json()}, ensure_ascii=False, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())

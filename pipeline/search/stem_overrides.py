"""Find the words whose stems differ between Elasticsearch's and tantivy's Porter2, for a corpus.

Lucene (and so Elasticsearch) ships Snowball's original Porter2; tantivy's rust-stemmers ships Snowball 2.x,
which changed a few rules (``-ologist``, the ``emerg``/``inter``/``evening`` exceptions, ``added``). The
difference is small but real: it moves a handful of documents in a top-10. The shared analysis therefore
pins those words on the Elasticsearch side (a ``stemmer_override`` filter) to tantivy's stem.
``porter2_overrides.json`` covers the vocabularies the project ships (the sample dump, BEIR SciFact,
StrategyQA questions). For a real Wikipedia dump, regenerate it against your cluster:

    python -m pipeline.search.stem_overrides --es http://127.0.0.1:9200 data/wiki/paragraphs.jsonl [...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import tantivy

from pipeline.common.jsonl import iter_jsonl
from pipeline.search.analysis import OVERRIDES_FILE, TOKEN_PATTERN


def vocabulary(paths: list[Path]) -> set[str]:
    tok = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(TOKEN_PATTERN)).filter(tantivy.Filter.lowercase()).build()
    vocab: set[str] = set()
    for path in paths:
        for row in iter_jsonl(path, "paragraph line"):
            vocab.update(tok.analyze(f"{row.get('title', '')} {row.get('text', '')}"))
    return {w for w in vocab if not any(c in w for c in "'’.")}


def differences(words: set[str], es) -> dict[str, str]:
    stem = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).filter(tantivy.Filter.stemmer("english")).build()
    ordered = sorted(words)
    out = {}
    for i in range(0, len(ordered), 2000):
        chunk = ordered[i:i + 2000]
        tokens = es.indices.analyze(body={"tokenizer": "whitespace", "text": " ".join(chunk),
                                          "filter": [{"type": "stemmer", "language": "porter2"}]})["tokens"]
        for word, tok in zip(chunk, tokens, strict=True):
            ours = stem.analyze(word)[0]
            if ours != tok["token"]:
                out[word] = ours
    return out


def main(argv: list[str] | None = None) -> int:
    from elasticsearch import Elasticsearch

    ap = argparse.ArgumentParser(prog="python -m pipeline.search.stem_overrides", description=__doc__.split("\n")[0])
    ap.add_argument("jsonl", nargs="+", type=Path, help="files of {title, text} lines")
    ap.add_argument("--es", required=True, help="any reachable Elasticsearch (only _analyze is used)")
    args = ap.parse_args(argv)
    current = json.loads(OVERRIDES_FILE.read_text(encoding="utf-8"))
    found = differences(vocabulary(args.jsonl), Elasticsearch(args.es, request_timeout=120))
    current["overrides"] = dict(sorted({**current["overrides"], **found}.items()))
    OVERRIDES_FILE.write_text(json.dumps(current, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(found)} differing words found; {len(current['overrides'])} overrides in {OVERRIDES_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

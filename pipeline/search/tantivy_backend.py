"""The embedded default backend: a tantivy index on disk, BM25 with the shared English analysis.

tantivy's BM25 is Lucene's (k1 = 1.2, b = 0.75, the same idf and one-byte length norms), so with the same
analysis it ranks like Elasticsearch. The index is built in a scratch folder and renamed into place, so an
interrupted build never replaces a complete one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path

import tantivy

from pipeline.search.analysis import ANALYZER, tantivy_analyzer
from pipeline.search.base import Run


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("id", stored=True, tokenizer_name="raw")
    b.add_text_field("title", stored=True, tokenizer_name=ANALYZER)
    b.add_text_field("text", stored=True, tokenizer_name=ANALYZER)
    return b.build()


def _open(path: Path, create: bool) -> tantivy.Index:
    index = tantivy.Index(_schema(), path=str(path), reuse=not create)
    index.register_tokenizer(ANALYZER, tantivy_analyzer())  # tokenizers are not stored with the index
    return index


def _canonical_segment_names(path: Path) -> None:
    """Rename each segment after its content: tantivy names segments with random UUIDs, so two builds from the
    same paragraphs are byte-identical except for file names and ``meta.json``, and DVC would see a new index
    (and rerun everything downstream) after every rebuild. Named by a hash of their files, the same paragraphs
    give the same index hash. Run on a closed, merged index, before it is renamed into place."""
    meta_path, managed_path = path / "meta.json", path / ".managed.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    renames: dict[str, str] = {}
    for segment in meta["segments"]:
        old = segment["segment_id"].replace("-", "")
        digest = hashlib.sha256()
        for f in sorted(path.glob(f"{old}.*")):
            digest.update(f.suffix.encode() + f.read_bytes())
        new = digest.hexdigest()[:32]
        renames[old] = new
        segment["segment_id"] = str(uuid.UUID(new))
    for old, new in renames.items():
        for f in path.glob(f"{old}.*"):
            f.rename(path / f"{new}{f.suffix}")
    meta_path.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    managed = json.loads(managed_path.read_text(encoding="utf-8"))
    for old, new in renames.items():
        managed = [name.replace(old, new) for name in managed]
    managed_path.write_text(json.dumps(sorted(managed)), encoding="utf-8")
    # the empty .tantivy-*.lock files stay: a reader recreates them, which would change the output's hash


class TantivyBackend:
    def __init__(self, path: Path, heap_bytes: int = 256_000_000, threads: int = 1):
        """``threads`` > 1: tantivy's own parallel writer (one segment per thread, then merged). Faster on a
        big corpus, the same search results (ties are cut by id), but which document lands in which segment
        varies, so the files are not byte-identical from build to build as they are with one thread."""
        self.path = Path(path)
        self.heap_bytes, self.threads = heap_bytes * max(1, threads), threads
        self._index: tantivy.Index | None = None

    def index(self, docs: Iterable[dict]) -> int:
        scratch = self.path.with_name(self.path.name + ".building")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        index = _open(scratch, create=True)
        writer = index.writer(heap_size=self.heap_bytes, num_threads=self.threads)
        n = 0
        for d in docs:
            writer.add_document(tantivy.Document(id=str(d["id"]), title=d.get("title") or "", text=d.get("text") or ""))
            n += 1
        writer.commit()
        writer.wait_merging_threads()
        del writer, index  # closed before the files are renamed
        _canonical_segment_names(scratch)
        shutil.rmtree(self.path, ignore_errors=True)
        scratch.rename(self.path)
        self._index = None
        return n

    def _searcher(self) -> tuple[tantivy.Index, tantivy.Searcher]:
        if self._index is None:
            if not (self.path / "meta.json").exists():
                raise FileNotFoundError(f"no tantivy index at {self.path}: run the index stage first")
            self._index = _open(self.path, create=False)
            self._index.reload()
        return self._index, self._index.searcher()

    def search(self, queries: dict[str, str], k: int) -> Run:
        index, searcher = self._searcher()
        run: Run = {}
        analyzer = tantivy_analyzer()
        for qid, text in queries.items():
            terms = analyzer.analyze(text)
            if not terms:  # nothing left after stop words: no match, as in ES
                run[qid] = {}
                continue
            # What ES builds for bool.should[match(title), match(text)]: one SHOULD term clause per analysed
            # query token and field (a repeated token counts twice), scores summed. Built directly rather than
            # through the query parser, whose syntax would trip over apostrophes and brackets in questions.
            clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(index.schema, field, term))
                       for field in ("title", "text") for term in terms]
            query = tantivy.Query.boolean_query(clauses)
            # documents tied with the k-th are all fetched, then cut by id: which of them make the top k must
            # not depend on the order they were indexed in (Elasticsearch sorts ties by id the same way)
            limit = k
            while True:
                hits = searcher.search(query, limit).hits
                if len(hits) < limit or hits[-1][0] < hits[k - 1][0]:
                    break
                limit *= 2
            scored = [(float(score), searcher.doc(addr)["id"][0]) for score, addr in hits]
            run[qid] = {doc_id: score for score, doc_id in sorted(scored, key=lambda h: (-h[0], h[1]))[:k]}
        return run


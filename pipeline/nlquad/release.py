"""A NLQuAD release as the data set, in place of the crawl: the paper's own articles, questions and split.

The authors distribute NLQuAD (github.com/asoleimanib/nlquad, CC BY-NC) as SQuAD v1.1-format JSON files, one per
split: ``{"data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question", "answers": [{"text",
"answer_start"}]}]}]}]}``. Put them in ``data/nlquad_release/`` and set ``build_nlquad.source: release``:
``build_nlquad`` reads them instead of the extracted pages, and ``split`` keeps the release's own split (each
file's name says which: ``train``, ``val``/``dev``, ``eval``/``test``) instead of drawing one, so the eval rows
score the paper's evaluation set with the paper's metrics. Everything after ``split`` is unchanged.

Every record is checked (a file, an article or a question named in the error): answers must be the exact text at
``answer_start`` of their context, ids unique over all files, each file's split recognisable from its name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SPLIT_NAMES = (("train", "train"), ("validation", "dev"), ("valid", "dev"), ("val", "dev"), ("dev", "dev"),
               ("eval", "test"), ("test", "test"))
RELEASE_SPLIT = "release_split"  # the article field that carries the release's split


class ReleaseError(ValueError):
    """A release file is missing, malformed, or disagrees with itself; the message names where."""


def split_of(path: Path) -> str:
    """The split a release file holds, from its name (``NLQuAD_train.json``, ``val.json``, ``eval.json``)."""
    words = re.split(r"[^a-z]+", path.stem.lower())
    for token, split in SPLIT_NAMES:
        if token in words:
            return split
    raise ReleaseError(f"{path}: the file name does not say its split (train, val/dev or eval/test)")


def _article(path: Path, i: int, art: Any, split: str, seen: set[str]) -> dict[str, Any]:
    where = f"{path}: data[{i}]"
    if not isinstance(art, dict) or not isinstance(art.get("paragraphs"), list):
        raise ReleaseError(f"{where}: not an article with a 'paragraphs' list")
    paragraphs = []
    for j, para in enumerate(art["paragraphs"]):
        if not isinstance(para, dict) or not isinstance(para.get("context"), str) or not isinstance(
                para.get("qas"), list):
            raise ReleaseError(f"{where}.paragraphs[{j}]: needs a 'context' string and a 'qas' list")
        context, qas = para["context"], []
        for qa in para["qas"]:
            qid = qa.get("id") if isinstance(qa, dict) else None
            if not isinstance(qid, str) or not isinstance(qa.get("question"), str) or not qa.get("answers"):
                raise ReleaseError(f"{where}.paragraphs[{j}]: a question lacks an 'id', its 'question' or 'answers'")
            if qid in seen:
                raise ReleaseError(f"{where}: question id {qid!r} appears twice in the release")
            seen.add(qid)
            answers = []
            for ans in qa["answers"]:
                text, start = (ans.get("text"), ans.get("answer_start")) if isinstance(ans, dict) else (None, None)
                if not isinstance(text, str) or not isinstance(start, int) or context[start:start + len(text)] != text:
                    raise ReleaseError(f"{where}: question {qid!r}: its answer is not the context's text at "
                                       "answer_start")
                answers.append({"text": text, "answer_start": start, "answer_end": start + len(text)})
            qas.append({"id": qid, "question": qa["question"], "answers": answers})
        paragraphs.append({"context": context, "qas": qas})
    title = art.get("title") if isinstance(art.get("title"), str) else ""
    return {"title": title, "date": None, "url": f"{split}/{title or i}", "id": f"{path.stem}-{i}",
            "paragraphs": paragraphs, RELEASE_SPLIT: split}


def load_release(folder: Path) -> dict[str, Any]:
    """Every ``*.json`` of ``folder`` as one data set in the pipeline's layout, each article tagged with its split."""
    files = sorted(folder.glob("*.json"))
    if not files:
        raise ReleaseError(f"{folder}: no NLQuAD release file (*.json) here; build_nlquad.source is 'release'")
    data: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in files:
        split = split_of(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ReleaseError(f"{path}: not JSON ({exc})") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("data"), list):
            raise ReleaseError(f"{path}: expected SQuAD v1.1 format, an object with a 'data' list")
        data += [_article(path, i, art, split, seen) for i, art in enumerate(raw["data"])]
    return {"version": "nlquad-release", "data": data}


def release_splits(dataset: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """The release's own split when every article carries one, else None (the split stage draws one)."""
    if not dataset["data"] or any(RELEASE_SPLIT not in a for a in dataset["data"]):
        return None
    return {name: {"version": dataset.get("version"), "data": [a for a in dataset["data"] if a[RELEASE_SPLIT] == name]}
            for name in ("train", "dev", "test")}

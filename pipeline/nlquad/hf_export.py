"""NLQuAD as Hugging Face ``datasets`` loads it: flat per-split JSON Lines and a dataset card.

The SQuAD-shaped files (``data/splits``) nest articles > paragraphs > questions; ``datasets`` and most QA
code (``run_qa.py``) expect one flat record per question in the SQuAD layout of the Hub:
``id, title, context, question, answers{text: [..], answer_start: [..]}``. Splits are named as on the Hub
(``train``, ``validation``, ``test``). The card (``README.md``) holds the statistics of the paper's Table 2
computed on these files, the source and date range, and what may be redistributed.

    datasets.load_dataset("json", data_files={"train": "data/nlquad_hf/train.jsonl", ...})
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.common.files import atomic_output
from pipeline.nlquad.squad_format import iter_article_qas, table2_statistics

HUB_SPLITS = {"train": "train", "dev": "validation", "test": "test"}


def flat_examples(dataset: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for art, para, qa in iter_article_qas(dataset):
        yield {"id": qa["id"], "title": art.get("title", ""), "context": para["context"], "question": qa["question"],
               "answers": {"text": [a["text"] for a in qa["answers"]],
                           "answer_start": [a["answer_start"] for a in qa["answers"]]}}


CARD_COLUMNS = ("articles", "questions", "document_words_mean", "question_words_mean", "answer_words_mean")


def split_statistics(dataset: dict[str, Any]) -> dict[str, Any]:
    """The card's columns of NLQuAD's Table 2 for one split (one decimal)."""
    table = table2_statistics(dataset, 1)
    return {k: table[k] for k in CARD_COLUMNS}


CARD = """---
language: en
task_categories: [question-answering]
task_ids: [extractive-qa]
pretty_name: NLQuAD (qa-pipeline build)
configs:
  - config_name: default
    data_files:
{data_files}
---

# NLQuAD, as built by qa-pipeline

Non-factoid long question answering in the manner of Soleimani et al. (2021, EACL), "NLQuAD: A
Non-Factoid Long Question Answering Data Set": BBC News articles whose interrogative sub-headings (ending
in '?') become questions; the section under each is the answer span, found in the article with its
headings removed (the document).

* **Source**: {source}
* **Captures**: {start} to {end}; one capture per article, de-duplicated across re-captures and domains.
* **Split**: by article ({ratios}, seed {seed}): an article's questions are never in two splits.
* **Format**: one JSON line per question: `id, title, context, question, answers{{text, answer_start}}`
  (the SQuAD layout of the Hugging Face Hub; `answer_start` is a character offset into `context`).

## Statistics (the paper's Table 2, computed on these files)

| split | articles | questions | document words (mean) | question words (mean) | answer words (mean) |
|---|---|---|---|---|---|
{rows}

## Load

```python
from datasets import load_dataset
ds = load_dataset("json", data_files={{{loader}}})
```

## Licence

The article texts are BBC copyright; they are archived by the Internet Archive, and this build is for
research use. Do not redistribute the texts: share the code and the capture list (`data/raw/captures.jsonl`,
URLs and timestamps) so others rebuild the same set, as the NLQuAD authors did. The offline sample that
`make repro` builds is synthetic: real BBC page templates filled with Wikipedia vital-article text
(CC BY-SA 4.0).
"""


def write_hf_export(splits: dict[str, dict[str, Any]], out_dir: Path, source: str, start: str, end: str,
                    ratios: dict[str, float], seed: int) -> dict[str, dict[str, Any]]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stats = {}
    for name, dataset in splits.items():
        hub = HUB_SPLITS[name]
        with atomic_output(out_dir / f"{hub}.jsonl") as fh:
            for ex in flat_examples(dataset):
                fh.write(json.dumps(ex, ensure_ascii=False) + "\n")
        stats[hub] = split_statistics(dataset)
    rows = "\n".join(f"| {s} | {v['articles']} | {v['questions']} | {v['document_words_mean']} | "
                     f"{v['question_words_mean']} | {v['answer_words_mean']} |" for s, v in stats.items())
    data_files = "\n".join(f"      - split: {s}\n        path: {s}.jsonl" for s in stats)
    loader = ", ".join(f'"{s}": "{out_dir.as_posix()}/{s}.jsonl"' for s in stats)
    with atomic_output(out_dir / "README.md") as fh:
        fh.write(CARD.format(data_files=data_files, source=source, start=start, end=end, seed=seed,
                             ratios="/".join(f"{int(round(100 * r))}" for r in ratios.values()), rows=rows,
                             loader=loader))
    return stats

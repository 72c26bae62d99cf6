"""Accuracy per question type and per domain, laid out like the QuAIL paper's tables, with its figures beside.

The paper's figures live in ``references/rogers2020_quail.json``; an entry left ``null`` there was not
transcribed, and the table says so rather than printing a number nobody checked.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from pipeline.quail.data import DOMAINS, QUESTION_TYPES, MCQuestion

REFERENCE_FILE = Path(__file__).resolve().parents[2] / "references" / "rogers2020_quail.json"


def _pct(correct: int, total: int) -> float | None:
    return round(100.0 * correct / total, 2) if total else None


def accuracy_table(questions: list[MCQuestion], predictions: dict[str, int]) -> dict:
    """``{"all", "by_type", "by_domain", "questions"}`` in percent; questions without a key are skipped."""
    keyed = [q for q in questions if q.answer is not None]
    missing = [q.qid for q in keyed if q.qid not in predictions]
    if missing:
        raise ValueError(f"{len(missing)} question(s) have no prediction, e.g. {missing[:3]}")
    tally: dict[str, dict[str, list[int]]] = {"type": defaultdict(lambda: [0, 0]), "domain": defaultdict(lambda: [0, 0])}
    for q in keyed:
        hit = int(predictions[q.qid] == q.answer)
        for key, value in (("type", q.question_type), ("domain", q.domain)):
            tally[key][value][0] += hit
            tally[key][value][1] += 1
    order_t = [t for t in QUESTION_TYPES if t in tally["type"]] + sorted(set(tally["type"]) - set(QUESTION_TYPES))
    order_d = [d for d in DOMAINS if d in tally["domain"]] + sorted(set(tally["domain"]) - set(DOMAINS))
    return {
        "questions": len(keyed),
        "all": _pct(sum(predictions[q.qid] == q.answer for q in keyed), len(keyed)),
        "by_type": {t: _pct(*tally["type"][t]) for t in order_t},
        "by_domain": {d: _pct(*tally["domain"][d]) for d in order_d},
    }


def per_question(questions: list[MCQuestion], predictions: dict[str, int]) -> dict[str, int]:
    """``{qid: 1 if correct else 0}``: what the difficulty analysis averages over models."""
    return {q.qid: int(predictions[q.qid] == q.answer) for q in questions if q.answer is not None}


def load_reference(path: Path = REFERENCE_FILE) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def markdown_tables(results: dict[str, dict[str, dict]], reference: dict, title: str) -> str:
    """``results[set][system] = accuracy_table(...)``; one type table and one domain table per set, each
    system's row followed by the paper's row for it where the reference has one."""
    lines = [f"# {title}", ""]
    note = reference.get("note")
    if note:
        lines += [f"> Paper figures: {note}", ""]
    for set_name, systems in results.items():
        paper_set = reference.get("tables", {}).get(set_name, {})
        for axis, label, keys in (("by_type", "question type", QUESTION_TYPES), ("by_domain", "domain", DOMAINS)):
            present = [k for k in keys if any(k in s[axis] for s in systems.values())]
            lines.append(f"## {set_name}: accuracy (%) by {label}")
            lines.append("")
            lines.append("| system | " + " | ".join(present) + " | all | n |")
            lines.append("|---" * (len(present) + 3) + "|")
            for name, table in systems.items():
                lines.append(f"| {name} | " + " | ".join(_cell(table[axis].get(k)) for k in present)
                             + f" | {_cell(table['all'])} | {table['questions']} |")
                paper = paper_set.get(name)
                if paper is not None:
                    lines.append(f"| {name} (paper, {reference.get('split', 'test')}) | "
                                 + " | ".join(_cell(paper.get(axis, {}).get(k)) for k in present)
                                 + f" | {_cell(paper.get('all'))} | |")
            lines.append("")
    return "\n".join(lines)

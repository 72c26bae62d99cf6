"""Accuracy per question type and per domain, laid out like the QuAIL paper's tables, with its figures beside.

The paper's figures (Rogers et al. 2020, Tables 3-5) are read from the published transcription
``quail_rogers2020_tables.json`` (``benchmark_sources.quail_paper_tables``), never copied into the project.
Our dev-set rows sit beside the paper's test-split rows (Table 3: same size, same question mix; the test
key is not public), the challenge set beside Table 4. Every gap of ``DEVIATION_POINTS`` or more is listed
with its explanation, from :data:`DEVIATION_NOTES`.
"""

from __future__ import annotations

import json
from collections import defaultdict

from pipeline.common.intervals import bootstrap_ci
from pathlib import Path

from pipeline.quail.data import DOMAINS, QUESTION_TYPES, MCQuestion

DEVIATION_POINTS = 10.0
PAPER_SYSTEMS = ("longchoice", "avgcos", "lstm", "pmi", "ir", "trian", "bert")
# Why ours differs from the paper where it does, per system: checked against the paper's definitions.
DEVIATION_NOTES = {
    "random": "The paper has no random row; chance is 25%.",
    "longchoice": ("Same definition (longest option, 'not enough information' with the unanswerable share of the "
                   "training data; ours is the share in the dev texts used for training, 0.111 vs the paper's 1/9). "
                   "The definition leaves no other choice, so a per-type gap here (Event_duration) comes from the "
                   "questions themselves: ours are dev, the paper's are its test split."),
    "avgcos": ("Stand-in vectors: GloVe 6B 50-d (PyPI) for FastText CommonCrawl 300-d, so cosines differ; the "
               "profile is the paper's (strongest on Unanswerable, weakest on Character_identity/Factual), the "
               "levels are not."),
    "lstm": ("Stand-in vectors (GloVe 6B 50-d) and an untrained BiLSTM (seeded initialisation: the paper gives "
             "no training for this heuristic); encodings from random weights rank options differently."),
    "pmi": ("Definition matched: every n-gram counts (Clark et al.'s solver; dropping stop-word n-grams gave "
            "Unanswerable 62.5% on dev); overall and 8 of 9 types now sit within 10 points of the paper. Causality "
            "stays about 13 points under it, which the definition does not explain (about 200 questions per type, "
            "so not sampling noise alone). "
            "On the challenge set the paper's PMI barely moves (-0.03) while ours falls ~12 points from dev "
            "fiction: not explained by the definition. Checked: the challenge texts are not dev texts (the "
            "paper's unparaphrased delta cannot be recomputed offline), the jsonl and XML releases agree, and "
            "option order does not change the result beyond ties."),
    "ir": ("Definition matched: Clark et al.'s rule that a sentence shares a non-stop word with question and "
           "option (without it, Unanswerable is 2.1% right on dev). Ours stays stronger than the paper's on "
           "text-based types (the paper's IR is near chance on 8 of 9 types); indexing all texts' sentences "
           "instead of the question's own text (40.9 overall) does not reproduce the paper either."),
    "trian": "Not run here (no TriAN implementation); the paper's row is printed for reference.",
    "bert": ("Not in this stage: our multiple-choice transformer is the quail_mc stage (MiniLM, a CPU budget); "
             "the paper's BERT-base row is printed for reference."),
}


def paper_rows(reference: dict, set_name: str) -> dict[str, dict]:
    """``{system: {"all", "by_type"}}`` in percent from the transcription; Table 3 for dev (the paper's
    test split), Table 4 (fractions) for the challenge set."""
    if not reference:
        return {}
    key = "table3_by_type_test" if set_name == "dev" else "table4_challenge_by_type"
    table = reference.get(key) or {}
    cols = table.get("columns", [])
    out = {}
    for system, row in table.get("rows", {}).items():
        values = row["accuracy"] if isinstance(row, dict) else row
        scale = 100.0 if isinstance(row, dict) else 1.0
        pct = {c: round(v * scale, 1) for c, v in zip(cols, values, strict=True)}
        out[system] = {"all": pct.pop("all", None), "by_type": pct}
    return out


def paper_domain_rows(reference: dict) -> dict[str, dict[str, float]]:
    """Table 5: BERT by domain, per question-type group."""
    table = (reference or {}).get("table5_bert_by_domain") or {}
    cols = table.get("columns", [])
    return {group: dict(zip(cols, values, strict=True)) for group, values in table.get("rows", {}).items()}


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
        "ci95": bootstrap_ci([float(predictions[q.qid] == q.answer) for q in keyed]),
        "by_type": {t: _pct(*tally["type"][t]) for t in order_t},
        "by_domain": {d: _pct(*tally["domain"][d]) for d in order_d},
    }


def per_question(questions: list[MCQuestion], predictions: dict[str, int]) -> dict[str, int]:
    """``{qid: 1 if correct else 0}``: what the difficulty analysis averages over models."""
    return {q.qid: int(predictions[q.qid] == q.answer) for q in questions if q.answer is not None}


def load_reference(path: str | Path | None) -> dict:
    if not path:
        return {}
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def deviations(results: dict[str, dict[str, dict]], reference: dict) -> list[dict]:
    """Every (set, system, type or 'all') where ours and the paper's differ by ``DEVIATION_POINTS`` or more."""
    out = []
    for set_name, systems in results.items():
        paper = paper_rows(reference, set_name)
        for system, table in systems.items():
            if system not in paper:
                continue
            pairs = [("all", table["all"], paper[system]["all"])]
            pairs += [(t, table["by_type"].get(t), v) for t, v in paper[system]["by_type"].items()]
            for column, ours, theirs in pairs:
                if ours is not None and theirs is not None and abs(ours - theirs) >= DEVIATION_POINTS:
                    out.append({"set": set_name, "system": system, "column": column, "ours": ours,
                                "paper": theirs, "diff": round(ours - theirs, 1)})
    return out


def markdown_tables(results: dict[str, dict[str, dict]], reference: dict, title: str,
                    notes: dict[str, str] | None = None) -> str:
    """``results[set][system] = accuracy_table(...)``: per set a type table (each system's row followed by
    the paper's), a domain table, then the deviations with their explanations."""
    notes = DEVIATION_NOTES if notes is None else notes
    lines = [f"# {title}", ""]
    if reference.get("source"):
        lines += [f"Paper: {reference['source']}", ""]
    for set_name, systems in results.items():
        paper = paper_rows(reference, set_name)
        label = "Table 3, its test split" if set_name == "dev" else "Table 4"
        types = list(next(iter(paper.values()))["by_type"] if paper else QUESTION_TYPES)
        types += [t for t in QUESTION_TYPES if t not in types and any(t in s["by_type"] for s in systems.values())]
        lines += [f"## {set_name}: accuracy (%) by question type" + (f" (paper: {label})" if paper else ""), ""]
        lines.append("| system | " + " | ".join(types) + " | all | n |")
        lines.append("|---" * (len(types) + 3) + "|")
        order = list(systems) + [s for s in PAPER_SYSTEMS if s in paper and s not in systems]
        for name in order:
            if name in systems:
                table = systems[name]
                lines.append(f"| {name} | " + " | ".join(_cell(table["by_type"].get(t)) for t in types)
                             + f" | {_cell(table['all'])} | {table['questions']} |")
            if name in paper:
                lines.append(f"| *{name} (paper)* | " + " | ".join(_cell(paper[name]["by_type"].get(t)) for t in types)
                             + f" | {_cell(paper[name]['all'])} | |")
        lines.append("")
        domains = [d for d in DOMAINS if any(d in s["by_domain"] for s in systems.values())]
        lines += [f"## {set_name}: accuracy (%) by domain", "", "| system | " + " | ".join(domains) + " | all |",
                  "|---" * (len(domains) + 2) + "|"]
        for name, table in systems.items():
            lines.append(f"| {name} | " + " | ".join(_cell(table["by_domain"].get(d)) for d in domains)
                         + f" | {_cell(table['all'])} |")
        if set_name == "dev":
            for group, row in paper_domain_rows(reference).items():
                lines.append(f"| *bert (paper, Table 5), {group}* | " + " | ".join(_cell(row.get(d)) for d in domains)
                             + " | |")
        lines.append("")
    found = deviations(results, reference)
    if found:
        lines += [f"## Deviations of {DEVIATION_POINTS:.0f} points or more", "",
                  "| set | system | column | ours | paper | ours - paper |", "|---|---|---|---|---|---|"]
        lines += [f"| {d['set']} | {d['system']} | {d['column']} | {_cell(d['ours'])} | {_cell(d['paper'])} | "
                  f"{d['diff']:+.1f} |" for d in found]
        lines += ["", "Why, per system:", ""]
        lines += [f"- **{s}**: {notes[s]}" for s in dict.fromkeys(d["system"] for d in found) if s in notes]
        lines.append("")
    return "\n".join(lines)

"""``model_cards``: a card beside every trained model (``README.md`` in its model folder, next to ``final/``).

A checkpoint without its card is a file nobody can use safely: which data, which budget, how good, against
what. Each card says what the model is and how to load it, what it was trained on and with which settings
(the params section as the run used it), how training went (steps, the dev-selected checkpoint), its figures
on the evaluation set with their 95% intervals, every baseline it was compared with on the same questions
(``reports/compare.json``: the paired difference and whether its interval lies above zero), and what it is
for. Everything is read from the reports the other stages wrote; nothing is typed in."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.common.files import atomic_output
from pipeline.common.layout import PATHS
from pipeline.common.safe_text import markdown_cell
from pipeline.common.paired import UNITS
from pipeline.strategyqa.answering import PAPER_NAMES

if TYPE_CHECKING:
    from pipeline.params import Params

CARD_NAME = "README.md"  # in the model's folder, beside final/: where Hugging Face keeps a model's card


@dataclass(frozen=True)
class Card:
    """One trained model: where its card goes and which reports hold its story."""

    title: str
    track: str
    system: str  # its name in reports/compare.json
    section: str  # its params section
    group: str  # the model's paths.yaml group (``quail_mc.full``): its folder holds the card
    model: Path
    evaluation: Path  # the report with its figures and its training summary
    task: str
    data: str
    loader: str

    @property
    def card(self) -> Path:
        return self.model.parent / CARD_NAME

    @property
    def out(self) -> str:
        """The card as dvc.yaml's outs name it."""
        return "${paths." + self.group + ".model_dir}/" + CARD_NAME


# the choice models: (track, params section, system prefix, title, task, data, loader); {} is the variant
STRATEGYQA = ("strategyqa", "strategyqa_qa", "qa_", "StrategyQA yes/no, {}",
              "yes/no classification of a StrategyQA question (setting {} of Geva et al. 2021)",
              "StrategyQA train questions (official file, read in place); dev carved out for checkpoint selection; "
              "contexts from `data/strategyqa_qa/contexts.json`", "AutoModelForSequenceClassification")
QUAIL = ("quail", "quail_mc", "mc_", "QuAIL multiple choice, {} input", "4-option multiple choice on QuAIL ({})",
         "The training share of QuAIL's dev texts (by text, per domain, seeded); the held-out dev texts and the "
         "challenge set are never seen in training", "AutoModelForMultipleChoice")


def _choice_card(kind: tuple[str, ...], key: str, model: Path, report: Path) -> Card:
    track, section, prefix, title, task, data, loader = kind
    # a StrategyQA setting goes by the paper's name (IR-ORA-D), a QuAIL variant by its inputs (passage + options)
    name = PAPER_NAMES[key] if track == "strategyqa" else key.replace("_", " + ")
    return Card(title.replace("{}", PAPER_NAMES[key] if track == "strategyqa" else key), track, f"{prefix}{key}",
                section, f"{section}.{key}", model, report, task.replace("{}", name), data, loader)


def cards() -> list[Card]:
    span_data = ("NLQuAD as this pipeline builds it (`data/splits/train.json`): questions are a BBC article's "
                 "interrogative sub-headings, answers the section under each; split 80/10/10 by article")
    out = [
        Card("Sliding-window span QA (NLQuAD)", "nlquad", "span_window", "span_window", "train_span",
             PATHS.train_span.model, PATHS.evaluate_span.report,
             "extractive QA over windows of {max_seq_len} tokens, one starting every {doc_stride}, the best answer across an "
             "article's windows", span_data,
             "AutoModelForQuestionAnswering"),
        Card("Longformer span QA (NLQuAD)", "nlquad", "longformer", "longformer", "train_longformer",
             PATHS.train_longformer.model, PATHS.evaluate_longformer.report,
             "extractive QA over whole articles of up to {max_seq_len} tokens (global attention on the question, "
             "window {attention_window})", span_data,
             "AutoModelForQuestionAnswering"),
    ]
    for setting in PATHS.strategyqa_qa.keys():
        out.append(_choice_card(STRATEGYQA, setting, PATHS.strategyqa_qa[setting].model,
                                PATHS.strategyqa_qa[setting].report))
    for variant in PATHS.quail_mc.keys():
        out.append(_choice_card(QUAIL, variant, PATHS.quail_mc[variant].model, PATHS.quail_mc[variant].report))
    out.append(Card("Auxiliary yes/no model (BoolQ)", "strategyqa", "boolq_aux", "boolq_aux", "boolq_aux",
                    PATHS.boolq_aux.model, PATHS.boolq_aux.report,
                    "yes/no classification of a question given a passage, the BoolQ link of the StrategyQA paper's "
                    "auxiliary chain (StrategyQA's classifiers start from it with `strategyqa_qa.start_from: "
                    "boolq_aux`)", "A BoolQ-format file (`boolq_aux.file`; by default BoolQ's official dev split), "
                    "split by article: a share held out for the figures below, a share of the rest to choose the "
                    "checkpoint", "AutoModelForSequenceClassification"))
    return out


def git_outs() -> list[str]:
    """Every out of this stage, as dvc.yaml names them: one card per model :func:`cards` knows (a new QuAIL
    variant or StrategyQA setting is one more, without an edit here). dvc.yaml's outs are generated from it."""
    return [card.out for card in cards()]


def _retrieval(card: Card) -> list[str]:
    """For a StrategyQA setting that retrieves its paragraphs: its Recall@10 beside the paper's, and how much of
    the corpus is evidence (the offline corpus makes retrieval near-oracle)."""
    from pipeline.strategyqa.answering import RETRIEVED

    setting = card.system.removeprefix("qa_")
    if setting not in RETRIEVED:
        return []
    report = json.loads(PATHS.strategyqa_contexts.report.read_text(encoding="utf-8"))
    recall = report.get(f"eval_recall@{report.get('k')}", {}).get(setting)
    paper = report.get("paper", {}).get("recall@10", {}).get(setting)
    share = report.get("gold_share")
    return [f"- its paragraphs: Recall@{report.get('k')} {recall}% on a corpus of {report.get('corpus_paragraphs'):,} "
            f"paragraphs, {100 * share:.1f}% of them StrategyQA evidence (an upper bound for this retriever"
            + (f"; the paper: {paper}% on 36.6M paragraphs)" if paper is not None else ")")]


def _figures(card: Card, evaluation: dict[str, Any]) -> list[str]:
    """The model's own figures, with intervals, as bullet lines."""
    if card.track == "nlquad":
        ci = evaluation.get("ci95", {})
        return [f"- {name}: **{evaluation[key]:.2f}**" + (f" [{ci[key][0]:.2f}, {ci[key][1]:.2f}]" if key in ci else "")
                for name, key in (("EM", "em"), ("F1", "f1"), ("IoU", "iou"), ("ROUGE-L", "rougeL"))
                if key in evaluation] + [f"- on `{markdown_cell(evaluation.get('eval_split'))}` ({markdown_cell(evaluation.get('n'))} questions)"]
    if card.track == "strategyqa":
        ci = evaluation.get("accuracy_ci95")
        # the auxiliary model is scored on held-out BoolQ articles, beside the majority with its paired interval
        n = evaluation.get("eval_questions", evaluation.get("heldout_questions"))
        cut = evaluation.get("eval_truncated_share", evaluation.get("heldout_truncated_share"))
        versus = evaluation.get("versus_majority")
        return [f"- accuracy: **{evaluation['accuracy']:.2f}**" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
                + f" on {n} questions; majority answer "
                  f"(\"{markdown_cell(evaluation['majority_answer'])}\"): {evaluation['majority_baseline']:.2f}",
                *([f"- minus the majority: {versus['difference']:+.2f} [{versus['ci95'][0]:+.2f}, "
                   f"{versus['ci95'][1]:+.2f}], {markdown_cell(versus['units'])} {markdown_cell(versus['unit'])}s resampled"] if versus else []),
                f"- predicted \"yes\" for {100 * (evaluation.get('predicted_yes_share') or 0):.1f}% of the questions; "
                f"{100 * (cut or 0):.1f}% of inputs cut at {evaluation['max_seq_len']} tokens", *_retrieval(card)]
    lines = []
    for name, label in (("dev_heldout", "held-out dev"), ("challenge", "challenge set")):
        if name in evaluation:
            part = evaluation[name]
            ci = part.get("ci95")
            lines.append(f"- {label}: **{part['all']:.2f}**" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
                         + f" accuracy on {part.get('questions', '?')} questions; "
                           f"{100 * part.get('truncated_share', 0):.0f}% of inputs cut at {evaluation['max_seq_len']} tokens")
    return lines


def _training(summary: dict[str, Any]) -> list[str]:
    best = summary.get("dev_best") or {}
    best_text = ", ".join(f"{markdown_cell(k)} {v:.2f}" if isinstance(v, float) else f"{markdown_cell(k)} {markdown_cell(v)}"
                          for k, v in best.items())
    # a report may come from an offline node (gpu-import): every string it carries is escaped
    return [f"- {markdown_cell(summary.get('steps'))} of {markdown_cell(summary.get('max_steps'))} steps on "
            f"{markdown_cell(summary.get('device'))} ({markdown_cell(summary.get('precision'))}"
            f"{'' if summary.get('attention_dropout') is None else ', attention dropout ' + markdown_cell(summary['attention_dropout'])}"
            f"{'' if summary.get('cpu_threads') is None else ', ' + markdown_cell(summary['cpu_threads']) + ' threads'})"
            f"{', stopped early' if summary.get('stopped_early') else ''}; "
            f"final training loss {markdown_cell(summary.get('final_loss'))}",
            f"- the checkpoint kept is step {markdown_cell(summary.get('best_step'))}, chosen on the dev set "
            f"({markdown_cell(summary.get('select_metric'))}; {best_text or 'no dev figure'})"]


def _baselines(card: Card, pairs: list[dict[str, Any]]) -> list[str]:
    rows = [p for p in pairs if p["track"] == card.track and p["system"] == card.system]
    if not rows:
        return ["No baseline on the same questions in `reports/compare.json`."]
    lines = ["| eval | baseline | figure | model | baseline | difference [95% CI] | above |", "|---|---|---|---|---|---|---|"]
    for p in rows:
        lo, hi = p["ci95"]
        lines.append(f"| {p['eval']} | {p['baseline']} | {p['figure']} | {p['system_mean']:.2f} | "
                     f"{p['baseline_mean']:.2f} | {p['difference']:+.2f} [{lo:+.2f}, {hi:+.2f}] | "
                     f"{'**above**' if p['above'] else 'no'} |")
    above = sum(p["above"] for p in rows)
    lines.append("")
    lines.append(f"Above its baseline (whole interval above zero) in {above} of {len(rows)} comparisons.")
    return lines


def _task(card: Card, budget: dict[str, Any]) -> str:
    """The card's one-line task, its numbers filled in from the settings it was trained with."""
    try:
        text = card.task.format(**budget)
    except (KeyError, IndexError):
        text = card.task
    return text[:1].upper() + text[1:]


def render(card: Card, budget: dict[str, Any], evaluation: dict[str, Any], pairs: list[dict[str, Any]]) -> str:
    settings = "\n".join(f"| `{card.section}.{k}` | {json.dumps(v)} |" for k, v in budget.items())
    summary = evaluation.get("training", evaluation)  # the span reports nest it; the choice models' hold it
    return "\n".join([
        f"# {card.title}", "",
        f"{_task(card, budget)}. Fine-tuned from `{budget.get('model_name_or_path', budget.get('source_model', 'the converted checkpoint'))}` "
        f"by qa-pipeline's `{card.track}` track; the weights are in `{card.model.name}/` beside this card "
        f"(`transformers.{card.loader}.from_pretrained(\"{card.model}\")`).", "",
        "## Data", "", card.data + ".", "",
        "## Settings", "", "| key | value |", "|---|---|", settings, "",
        "## Training", "", *_training(summary), f"- learning curves: `dvc plots show` (DVCLive, `dvclive/`)", "",
        "## Results", "", *_figures(card, evaluation), "",
        "## Against the baselines, on the same questions", "",
        *(["Its one baseline, the majority answer, is under Results with its paired interval (BoolQ articles "
           "resampled); `compare` covers the benchmark systems."] if card.system == "boolq_aux" else
          [f"Paired bootstrap (`scipy.stats.bootstrap`, 2,000 resamples of the {UNITS[card.track]}s the eval set "
           "sampled, each with all its questions).", "", *_baselines(card, pairs)]), "",
        "## Intended use", "",
        "A research baseline for the benchmark above, trained on the budget in Settings, to compare with other "
        "systems on the same splits. Not a production model: it has seen only this benchmark's training data, and "
        "a figure here holds for this evaluation set only. The figures are regenerated with the model (`dvc repro`); "
        "this card is written by the `model_cards` stage from `reports/`.", "",
    ])


def run(params: Params) -> dict:
    pairs = json.loads(PATHS.compare.report.read_text(encoding="utf-8"))["pairs"]
    written = {}
    for card in cards():
        budget = getattr(params, card.section).model_dump(mode="json")
        evaluation = json.loads(card.evaluation.read_text(encoding="utf-8"))
        with atomic_output(card.card) as fh:
            fh.write(render(card, budget, evaluation, pairs))
        written[card.system] = str(card.card)
    return {"cards": len(written)}

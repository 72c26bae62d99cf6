"""``model_cards``: a card beside every trained model (``README.md`` in its model folder, next to ``final/``).

A checkpoint without its card is a file nobody can use safely: which data, which budget, how good, against
what. Each card says what the model is and how to load it, what it was trained on and with which settings
(the params section as the run used it), how training went (steps, the dev-selected checkpoint), its figures
on the evaluation set with their 95% intervals, every baseline it was compared with on the same questions
(``reports/compare.json``: the paired difference and whether its interval lies above zero), and what it is
for. Everything is read from the reports the other stages wrote; nothing is typed in.

Which models there are comes from the stage table: the stage that scores a model names, in its row, the
function that declares its card's text (``Stage.card``; a ``ModelCard`` beside the module's ``headlines()``), so a
new model family brings its own card and a new QuAIL variant or StrategyQA setting is one more. The card goes in
the model's folder as ``final/`` does; this stage's dvc.yaml entry is written from :func:`entry`."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.common.files import atomic_output
from pipeline.common.layout import PATHS, Layout
from pipeline.common.model_card import ModelCard
from pipeline.common.safe_text import markdown_cell
from pipeline.common.paired import UNITS
from pipeline.stage_table import cards as declared_cards

if TYPE_CHECKING:
    from pipeline.params import Params

CARD_NAME = "README.md"  # in the model's folder, beside final/: where Hugging Face keeps a model's card
# what every card reads besides its model's own files: the comparisons and the retrieval figures StrategyQA's
# cards quote; and the benchmark files the modules that declare the cards' texts (the scoring stages) read
# elsewhere, which their import makes code this stage can run (tests/test_benchmark_entries.py holds the list to
# that code: a new family whose scoring module reads another benchmark file adds it here)
SHARED_DEPS = ("${paths.check_params.stamp}", "${paths.compare.report}", "${paths.strategyqa_contexts.report}",
               *(f"${{paths.benchmark_sources.entries}}/{name}.json"
                 for name in ("strategyqa_train", "strategyqa_eval", "quail_dev", "quail_challenge")))


@dataclass(frozen=True)
class Card(ModelCard):
    """One trained model's card: its text (declared by the stage that scores it) and where it goes."""

    @property
    def model_paths(self) -> Layout:
        group: Any = PATHS
        for key in self.model_group.split("."):
            group = group[key]
        return group

    @property
    def model(self) -> Path:
        return self.model_paths.model

    @property
    def card(self) -> Path:
        return self.model_paths.model_dir / CARD_NAME

    def ref(self, entry: str) -> str:
        """An entry of the model's group as dvc.yaml names it (``${paths.quail_mc.full.model}``)."""
        return "${paths." + self.model_group + "." + entry + "}"


def cards() -> list[Card]:
    """Every trained model's card, from the stage table: a new model family's scoring stage brings its own."""
    return [Card(**{f.name: getattr(text, f.name) for f in fields(text)}) for text in declared_cards()]


def _ref(path: Path) -> str:
    """A paths.yaml entry as dvc.yaml names it (``${paths.quail_mc.full.report}``)."""
    found = [key for key, value in PATHS.leaves().items() if value == path]
    if len(found) != 1:
        raise ValueError(f"{path}: not one paths.yaml entry ({found or 'none'})")
    return "${" + found[0] + "}"


def entry() -> dict[str, list[str]]:
    """This stage's dvc.yaml deps (besides code), params and outs, written by ``python -m
    pipeline.experiments.stage_deps``: per card its model, its evaluation report and its params section; the
    cards themselves (in git). A new model is one more card without an edit here."""
    found = cards()
    return {"deps": [*SHARED_DEPS, *(d for c in found for d in (c.ref("model"), _ref(c.evaluation)))],
            "params": list(dict.fromkeys(c.section for c in found)),
            "outs": [c.ref("model_dir") + "/" + CARD_NAME for c in found]}


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
            + (f"; the paper: {paper}% on 36.6M paragraphs, its test set)" if paper is not None else ")")]


def _figures(card: Card, evaluation: dict[str, Any]) -> list[str]:
    """The model's own figures, with intervals, as bullet lines."""
    if card.track == "nlquad":
        ci = evaluation.get("ci95", {})
        return [f"- {name}: **{evaluation[key]:.2f}**" + (f" [{ci[key][0]:.2f}, {ci[key][1]:.2f}]" if key in ci else "")
                for name, key in (("IoU (NLQuAD's primary measure)", "iou"), ("F1", "f1"), ("EM", "em"),
                                  ("ROUGE-L", "rougeL"))
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
            runs = part.get("over_seeds")
            over = (f" (mean of {runs['seeds']} training runs, SD {runs['sd']:.2f}; per run: "
                    f"{', '.join(f'{x:.2f}' for x in runs['per_seed'])}; interval over runs and texts)"
                    if runs and runs["seeds"] > 1 else "")
            lines.append(f"- {label}: **{part['all']:.2f}**" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "") + over
                         + f" accuracy on {part.get('questions', '?')} questions; "
                           f"{100 * part.get('truncated_share', 0):.0f}% of inputs cut at {evaluation['max_seq_len']} tokens")
            bias_0 = (evaluation.get("bias_0") or {}).get(name)
            if bias_0:
                lines.append(f"  - without the \"not enough information\" bias chosen on selection-dev (bias 0): "
                             f"{bias_0['all']:.2f} [{bias_0['ci95'][0]:.2f}, {bias_0['ci95'][1]:.2f}]")
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
    lines = ["| eval | baseline | figure | model | baseline | difference [95% CI] | p Holm | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for p in rows:
        lo, hi = p["ci95"]
        shown = {"above": "**above**", "one run": "*one run*", "fragile": "*fragile*"}.get(p["verdict"], p["verdict"])
        holm = "-" if p.get("p_holm") is None else f"{p['p_holm']:.3f}"
        lines.append(f"| {p['eval']} | {p['baseline']} | {p['figure']} | {p['system_mean']:.2f} | "
                     f"{p['baseline_mean']:.2f} | {p['difference']:+.2f} [{lo:+.2f}, {hi:+.2f}] | {holm} | {shown} |")
    above = sum(p["verdict"] == "above" for p in rows)
    lines.append("")
    if all(p["verdict"] == "one run" for p in rows):
        lines.append(f"Trained once ({rows[0]['seeds']} run): no verdict; the intervals cover the sampled "
                     f"{rows[0]['unit']}s, not how another training run would fall.")
    else:
        lines.append(f"Above its baseline (Holm-adjusted p under 0.05 within its family, over training runs and "
                     f"{rows[0]['unit']}s, and the t-interval over runs above zero) in {above} of {len(rows)} "
                     f"comparisons.")
    return lines


def _task(card: Card, budget: dict[str, Any]) -> str:
    """The card's one-line task, its numbers filled in from the settings it was trained with."""
    try:
        text = card.task.format(**budget)
    except (KeyError, IndexError):
        text = card.task
    return text[:1].upper() + text[1:]


def _loader(card: Card, budget: dict[str, Any]) -> str:
    """How to load the model as it was trained: a mean-pooled head needs the project's loader, since plain
    transformers reads every classification head through BERT's pooler (``pipeline/training/pooling.py``)."""
    plain = f"`transformers.{card.loader}.from_pretrained(\"{card.model}\")`"
    if budget.get("pooling") != "mean":
        return plain
    return (f"`pipeline.training.pooling.PooledModel(transformers.{card.loader}).from_pretrained(\"{card.model}\")`: "
            f"its head reads the mean of the token states, and {plain} would read BERT's pooler instead")


def render(card: Card, budget: dict[str, Any], evaluation: dict[str, Any], pairs: list[dict[str, Any]]) -> str:
    settings = "\n".join(f"| `{card.section}.{k}` | {json.dumps(v)} |" for k, v in budget.items())
    summary = evaluation.get("training", evaluation)  # the span reports nest it; the choice models' hold it
    return "\n".join([
        f"# {card.title}", "",
        f"{_task(card, budget)}. Fine-tuned from `{budget.get('model_name_or_path', budget.get('source_model', 'the converted checkpoint'))}` "
        f"by qa-pipeline's `{card.track}` track; the weights are in `{card.model.name}/` beside this card "
        f"({_loader(card, budget)}).", "",
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

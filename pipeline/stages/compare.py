"""``compare``: every trained system against its baselines on the same questions, with paired intervals.

A trained model counts when it beats its baselines beyond what the choice of eval data explains. Each row
pairs a system's and a baseline's per-question scores (NLQuAD: EM/F1/IoU on the eval split; QuAIL: accuracy on
the held-out dev texts and the challenge set; StrategyQA: accuracy on eval) and reports the mean difference
with its 95% paired bootstrap interval (``pipeline.common.paired``), resampling the unit each data set sampled:
articles for NLQuAD (every question sub-heading of a drawn article is in), texts for QuAIL (about 18 questions
were written on each drawn text), questions for StrategyQA (one question per strategy, no shared passage).
The headline rows (``metrics/<track>/<system>-<baseline>.json``, the difference in the track's own columns) are
what ``dvc metrics diff`` and ``make exps`` compare; ``reports/compare.{json,md}`` hold every pair with its
interval.

A system trained under several seeds (``pipeline.common.seed_runs``) is compared by the mean over its runs, and
its interval is a two-level bootstrap (``pipeline.common.paired_seeds``): seeds drawn with replacement (each
trained side's from its own), then units, so it covers how training fell as well as which questions were
drawn. Its ``verdict`` is "above", "level" or "below" by that interval, given only with at least
``MIN_SEEDS`` runs (of the system, and of a trained baseline); a system trained once is "one run": its interval
covers the units alone, and no verdict is read off it. ``every_seed_above`` says whether each run on its own
is above (its point difference), for a reader who asks.

Many pairs are read at once, so the verdict is corrected for them (``pipeline.common.verdicts``): each pair's
bootstrap p-value is Holm-adjusted within its family (one system on one eval set and figure), and beside the
two-level bootstrap a t-interval over the per-seed differences is drawn. "above" / "below" needs both;
"fragile" is a verdict one of them gives and the other does not. The uncorrected 95% reading stays in
``verdict_95``.

Beside the baselines stand the controls that tell reading from its shortcuts: NLQuAD's question-blind
position prior, the span model on shuffled questions (``shuffled_questions``: the same seeds, each question
replaced by another of its article) and every span system's own-vs-other overlap (``own_vs_other``: IoU with
its own answer minus IoU with its article's other answers, 0 for a system that ignores the question); QuAIL's
options-only logit; StrategyQA's bag-of-words question-only classifier.
"""

from __future__ import annotations

import json
from typing import Any, TYPE_CHECKING

from pipeline.common.headline import write_headline
from pipeline.common.layout import PATHS
from pipeline.common.manifest import source_path
from pipeline.common.paired import UNITS, design_effect, paired_difference
from pipeline.common.paired_seeds import paired_difference_over_seeds
from pipeline.common.seed_runs import runs_of, verdict
from pipeline.common.verdicts import combined, holm, holm_side, seed_t_interval, side
from pipeline.common.files import atomic_output, write_json
from pipeline.common.safe_text import markdown_cell
from pipeline.quail.sets import heldout_dev, quail_sets
from pipeline.quail.systems import HEURISTIC_BASELINES, MC_VARIANTS, mc_system
from pipeline.nlquad.clusters import article_clusters
from pipeline.nlquad.metrics import span_scores
from pipeline.nlquad.own_vs_other import own_and_other
from pipeline.nlquad.squad_format import iter_examples
from pipeline.strategyqa.answering import SETTINGS
from pipeline.strategyqa.data import load_questions

if TYPE_CHECKING:
    from pipeline.params import Params
    from pipeline.quail.config import HeldoutExclusion

SPAN_SYSTEMS = ("span_window", "longformer")
# the oracle is an upper bound, not a baseline; the position prior is the question-blind control
SPAN_BASELINES = ("first_window", "last_window", "random_window", "bm25l", "position_prior")
SHUFFLED = "shuffled_questions"  # the span model's own runs on shuffled questions (predict_span_shuffled)
OWN_VS_OTHER = "other_answers"  # the baseline of an own-vs-other pair: the same windows scored on the other answers
OWN_VS_OTHER_FIGURE = "IoU own-other"
# IoU first: NLQuAD's primary measure (Soleimani et al. 2021, sec. 4); F1 and EM as the paper also reports them
SPAN_FIGURES = {"IoU": "iou", "F1": "f1", "EM": "em"}
BOW = "bow_question"  # StrategyQA's bag-of-words question-only classifier (strategyqa_bow)
# the headline rows: (track, system, baseline); their files are headlines()
HEADLINE_PAIRS: tuple[tuple[str, str, str], ...] = (
    *(("nlquad", s, b) for s in SPAN_SYSTEMS for b in ("random_window", "bm25l")),
    ("nlquad", "span_window", "position_prior"), ("nlquad", "span_window", SHUFFLED),
    *(("quail", "mc_full", b) for b in ("random", "longchoice", "pmi", "ir", "options_features")),
    *(("quail", "mc_full", mc_system(v)) for v in MC_VARIANTS if v != "full"),
    # question-only is in the report: a headline row of its name would widen `dvc metrics show` past 160 columns
    *(("strategyqa", f"qa_{s}", "majority") for s in SETTINGS if s != "question_only"),
    ("strategyqa", "qa_ora_p", "qa_question_only"),  # against the bag-of-words control: in the report (width)
)


def headline_name(system: str, baseline: str) -> str:
    """The row name: ``A-B`` holds A minus B. The track's folder already says what ``qa_`` says, ``mc_`` is kept
    on the system only and a window baseline goes by its method, so a row fits ``dvc metrics show``'s path
    column (``mc_full-options``, ``span_window-random``, ``span_window-shuffled``)."""
    base = baseline.removeprefix("qa_").removeprefix("mc_").removesuffix("_window").removesuffix("_questions")
    return f"{system.removeprefix('qa_')}-{base}"


def _json(path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _pair(track: str, eval_set: str, system: str, baseline: str, figure: str, a: list[list[float]],
          b: list[list[float]], clusters: list[str] | None = None, baseline_trained: bool = False,
          system_trained: bool = True, same_runs: bool = False) -> dict:
    """One comparison: ``a`` the system's per-question scores, one row per training run (seed); ``b`` the
    baseline's, one row per run of a trained baseline or one row for a baseline that trains nothing.
    ``system_trained`` False: a system that trains nothing (a window, a fitted logit), one deterministic run
    that needs no seeds for a verdict. ``same_runs``: ``b``'s rows are the same trained runs as ``a``'s, seed for
    seed (a control run on altered input), so the t-interval pairs them. The verdict is set by
    :func:`with_verdicts`, over the whole family."""
    unit = UNITS[track]
    if len(a) == 1 and len(b) == 1:
        stats = paired_difference(a[0], b[0], clusters=clusters, unit=unit, with_p=True)
        stats["interval"] = f"bootstrap over {stats['unit']}s (one run)"
    else:
        stats = paired_difference_over_seeds(a, b, clusters=clusters, unit=unit, with_p=True)
    mean_a = [sum(col) / len(col) for col in zip(*a, strict=True)]
    mean_b = [sum(col) / len(col) for col in zip(*b, strict=True)]
    diff = [x - y for x, y in zip(mean_a, mean_b, strict=True)]
    stats["wins"], stats["losses"] = sum(d > 0 for d in diff), sum(d < 0 for d in diff)
    stats["seeds"], stats["baseline_seeds"] = len(a), len(b) if baseline_trained else None
    per_run_a = [100 * sum(row) / len(row) for row in a]
    per_run_b = [100 * sum(row) / len(row) for row in b]
    if same_runs:
        stats["seed_t"] = seed_t_interval([x - y for x, y in zip(per_run_a, per_run_b, strict=True)], [0.0])
    else:
        stats["seed_t"] = seed_t_interval(per_run_a, per_run_b)
    stats["verdict_95"] = (side(*stats["ci95"]) if not system_trained and not baseline_trained
                           else verdict(*stats["ci95"], len(a), stats["baseline_seeds"]))
    # the verdict of this pair read alone; with_verdicts replaces it with the family's, Holm-corrected
    stats["verdict"], stats["above"] = stats["verdict_95"], stats["verdict_95"] == "above"
    row = {"track": track, "eval": eval_set, "system": system, "baseline": baseline, "figure": figure, **stats}
    if clusters is not None:  # how much wider the clustered interval has to be than a per-question one
        row["design_effect"] = design_effect(diff, clusters)
    return row


def family(pair: dict) -> tuple[str, str, str, str]:
    """The pairs corrected together: one system on one eval set and figure (NLQuAD's figures are families of
    their own; QuAIL and StrategyQA have one figure per eval set)."""
    return pair["track"], pair["eval"], pair["system"], pair["figure"]


def with_verdicts(pairs: list[dict]) -> list[dict]:
    """Every pair with its Holm-adjusted p over its family (``p_holm``, ``family_size``) and its verdict: "one
    run" as before (too few seeds), else the Holm-corrected bootstrap's side and the seed t-interval's side
    combined (``pipeline.common.verdicts.combined``)."""
    families: dict[tuple, list[int]] = {}
    for i, p in enumerate(pairs):
        families.setdefault(family(p), []).append(i)
    out = [dict(p) for p in pairs]
    for members in families.values():
        adjusted = holm({str(i): pairs[i]["p_value"] for i in members})
        for i in members:
            p = out[i]
            p["p_holm"], p["family_size"] = adjusted[str(i)], len(members)
            if p["verdict_95"] == "one run":
                p["verdict"] = "one run"
            else:
                t = p["seed_t"]
                p["verdict"] = combined(holm_side(p["difference"], p["p_holm"]),
                                        side(*t["t_ci95"]) if t else None)
            p["above"] = p["verdict"] == "above"
    return out


def _mean(values: list[float]) -> float:
    return round(100 * sum(values) / len(values), 2)


def nlquad_pairs(eval_split: str, systems: tuple[str, ...] = SPAN_SYSTEMS,
                 per_question: dict | None = None) -> list[dict]:
    """Every span system of ``systems`` against the window baselines and the controls, and every system's
    own-vs-other overlap. ``systems``: a subset where only some were trained (the section-naming control,
    ``benchmarks/nlquad_control.py``, trains the sliding windows alone). ``per_question``: filled with each
    question's gold and every system's prediction (its first run's) and scores (the mean over its runs)."""
    dataset = _json(PATHS.split.dir / f"{eval_split}.json")
    # {system: {seed: predictions}}; a window baseline is one run of its own
    predictions = {s: runs_of(_json(PATHS[f"predict_{'span' if s == 'span_window' else s}"].predictions))
                   for s in systems}
    predictions[SHUFFLED] = runs_of(_json(PATHS.predict_span_shuffled.predictions))
    predictions |= {b: {0: _json(PATHS.nlquad_baselines.predictions / f"{b}.json")} for b in SPAN_BASELINES}
    runs: dict[str, list[dict[str, dict]]] = {}
    for name, by_seed in predictions.items():
        runs[name] = [span_scores(preds, dataset) for preds in by_seed.values()]
    ids = list(runs[systems[0]][0])
    article = article_clusters(dataset)
    clusters = [article[i] for i in ids]
    if per_question is not None:
        examples = {ex["id"]: ex for ex in iter_examples(dataset)}
        per_question[f"nlquad/{eval_split}"] = {i: {
            "unit": article[i], "question": examples[i]["question"], "gold": examples[i]["gold"],
            "systems": {name: {"prediction": next(iter(predictions[name].values())).get(i, {}).get("text"),
                               "runs": len(scored),
                               **{figure: _mean([run[i][key] for run in scored]) for figure, key in SPAN_FIGURES.items()}}
                        for name, scored in runs.items()}} for i in ids}
    out = []
    for s in systems:
        rivals = [*SPAN_BASELINES, *([SHUFFLED] if s == "span_window" else [])]
        for b in rivals:
            for figure, key in SPAN_FIGURES.items():
                out.append(_pair("nlquad", eval_split, s, b, figure, [[rows[i][key] for i in ids] for rows in runs[s]],
                                 [[rows[i][key] for i in ids] for rows in runs[b]], clusters,
                                 baseline_trained=b == SHUFFLED, same_runs=b == SHUFFLED))
    for s in (*systems, SHUFFLED, *SPAN_BASELINES):
        scored = [own_and_other(preds, dataset) for preds in predictions[s].values()]
        shared = list(scored[0])
        row = _pair("nlquad", eval_split, s, OWN_VS_OTHER, OWN_VS_OTHER_FIGURE,
                    # rounded: a window placed alike for every question gives 0 up to float noise
                    [[round(run[i][0] - run[i][1], 12) for i in shared] for run in scored], [[0.0] * len(shared)],
                    [article[i] for i in shared], system_trained=s in (*systems, SHUFFLED))
        row["own_iou"] = round(100 * sum(run[i][0] for run in scored for i in shared) / (len(shared) * len(scored)), 2)
        row["other_iou"] = round(100 * sum(run[i][1] for run in scored for i in shared) / (len(shared) * len(scored)), 2)
        out.append(row)
    return out


def _correct(predictions: dict[str, int], questions: list) -> list[float]:
    missing = [q.qid for q in questions if q.qid not in predictions]
    if missing:
        raise ValueError(f"{len(missing)} question(s) without a prediction, e.g. {missing[:3]}")
    return [float(predictions[q.qid] == q.answer) for q in questions]


def quail_pairs(train_share: float, seed: int, exclude: HeldoutExclusion | None = None,
                per_question: dict | None = None) -> list[dict]:
    sets, train = quail_sets(train_share, seed, exclude)
    evaluated = {"dev_heldout": heldout_dev(sets, train), "challenge": sets["challenge"]}
    baselines = _json(PATHS.quail_baselines.predictions)  # {set: {system: {qid: option}}}
    # {seed: {set: {qid: option}}} per trained variant
    mc = {mc_system(v): runs_of(_json(PATHS.quail_mc[v].predictions)) for v in MC_VARIANTS}
    out = []
    for eval_set, questions in evaluated.items():
        figure = "acc" if eval_set == "dev_heldout" else "acc_challenge"
        base_set = baselines["dev" if eval_set == "dev_heldout" else eval_set]
        scores = {s: [_correct(base_set[s], questions)] for s in HEURISTIC_BASELINES}
        scores |= {s: [_correct(run[eval_set], questions) for run in runs.values()] for s, runs in mc.items()}
        if per_question is not None:
            chosen = {s: base_set[s] for s in HEURISTIC_BASELINES} | {
                s: next(iter(runs.values()))[eval_set] for s, runs in mc.items()}
            per_question[f"quail/{eval_set}"] = {q.qid: {
                "unit": q.text_id, "question": q.question, "question_type": q.question_type, "domain": q.domain,
                "options": list(q.options), "gold": q.answer,
                "systems": {s: {"prediction": chosen[s][q.qid], "runs": len(scores[s]),
                                figure: _mean([run[n] for run in scores[s]])} for s in scores}}
                for n, q in enumerate(questions)}
        for s in mc:
            rivals = [*HEURISTIC_BASELINES, *(mc_system(v) for v in MC_VARIANTS if s == "mc_full" and v != "full")]
            out += [_pair("quail", eval_set, s, b, figure, scores[s], scores[b], [q.text_id for q in questions],
                          baseline_trained=b in mc)
                    for b in rivals]
        # the options-only logit against random: how much the options alone give a linear model
        out.append(_pair("quail", eval_set, "options_features", "random", figure, scores["options_features"],
                         scores["random"], [q.text_id for q in questions], system_trained=False))
    return out


def strategyqa_pairs(per_question: dict | None = None) -> list[dict]:
    questions = load_questions(source_path("strategyqa_eval"))
    gold = {q.qid: bool(q.answer) for q in questions}
    answers, majority = {}, {}
    for setting in SETTINGS:
        # {seed: {qid: answer}}: every training run of the setting
        answers[setting] = {seed: {qid: bool(v["answer"]) for qid, v in run.items()}
                            for seed, run in runs_of(_json(PATHS.strategyqa_qa[setting].predictions)).items()}
        majority[setting] = _json(PATHS.strategyqa_qa[setting].report)["majority_answer"] == "yes"

    def correct(setting: str, ids: list[str]) -> list[list[float]]:
        return [[float(run[i] == gold[i]) for i in ids] for run in answers[setting].values()]

    def common(*settings: str) -> list[str]:
        return sorted(set.intersection(*(set(run) for s in settings for run in answers[s].values())))

    bow = {qid: bool(v["answer"]) for qid, v in _json(PATHS.strategyqa_bow.predictions)["eval"].items()}
    bow_majority = _json(PATHS.strategyqa_bow.report)["eval"]["majority_answer"] == "yes"
    if per_question is not None:
        shown = {s: [run for run in answers[s].values()] for s in SETTINGS}
        per_question["strategyqa/eval"] = {q.qid: {
            "unit": q.qid, "question": q.question, "gold": "yes" if gold[q.qid] else "no",
            "systems": {**{f"qa_{s}": {"prediction": "yes" if shown[s][0][q.qid] else "no", "runs": len(shown[s]),
                                       "acc": _mean([float(run[q.qid] == gold[q.qid]) for run in shown[s]])}
                           for s in SETTINGS if all(q.qid in run for run in shown[s])},
                        **({BOW: {"prediction": "yes" if bow[q.qid] else "no", "runs": 1,
                                  "acc": 100.0 * (bow[q.qid] == gold[q.qid])}} if q.qid in bow else {})}}
            for q in questions}
    out = []
    ids = sorted(set(bow) & set(gold))
    out.append(_pair("strategyqa", "eval", BOW, "majority", "acc", [[float(bow[i] == gold[i]) for i in ids]],
                     [[float(bow_majority == gold[i]) for i in ids]], system_trained=False))
    for setting in SETTINGS:
        ids = common(setting)
        out.append(_pair("strategyqa", "eval", f"qa_{setting}", "majority", "acc", correct(setting, ids),
                         [[float(majority[setting] == gold[i]) for i in ids]]))
        shared = [i for i in ids if i in bow]
        out.append(_pair("strategyqa", "eval", f"qa_{setting}", BOW, "acc", correct(setting, shared),
                         [[float(bow[i] == gold[i]) for i in shared]]))
    for setting in SETTINGS:
        if setting == "question_only":
            continue
        ids = common(setting, "question_only")
        out.append(_pair("strategyqa", "eval", f"qa_{setting}", "qa_question_only", "acc", correct(setting, ids),
                         correct("question_only", ids), baseline_trained=True))
    return out


def markdown(pairs: list[dict]) -> str:
    lines = ["# Trained systems against their baselines, paired on the same questions", "",
             "Difference = system minus baseline in points (a system trained under several seeds: the mean over its "
             "runs); 95% paired bootstrap interval (2,000 resamples, seeded) of the unit the eval set sampled: NLQuAD "
             "articles, QuAIL texts, StrategyQA questions (each track's heading names it; both systems' questions of "
             "a resampled article or text go together), and of the training seeds where there are several (a "
             "two-level bootstrap: seeds, then units), with its two-sided bootstrap p and that p Holm-adjusted "
             "within the family (one system on one eval set and figure; m pairs); beside it the 95% t-interval over "
             "the per-seed differences. Verdict: **above** / below when the Holm-adjusted p is under 0.05 and the "
             "t-interval excludes zero on the same side, level when neither does, *fragile* when one does and the "
             "other not; *one run* for a system (or trained baseline) trained under fewer than 3 seeds: no verdict "
             "(a baseline or control that trains nothing is one deterministic run and gets one). "
             "Own-vs-other (NLQuAD): IoU with the question's own answer minus IoU with its article's other answers, "
             "on the questions whose article has two or more (0 for a system that ignores its question). "
             "Wins/losses: questions where the system (its mean over runs) scores higher/lower. "
             "Design effect: how many times the variance of the difference exceeds that of as many independent "
             "questions (1 + (m - 1) ICC).", ""]
    for track in dict.fromkeys(p["track"] for p in pairs):
        lines += [f"## {track} (resampled: {UNITS[track]}s)", "",
                  "| eval | system | baseline | figure | system | baseline | difference [95% CI] "
                  f"| verdict | seeds | wins / losses | questions | {UNITS[track]}s | design effect |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in (p for p in pairs if p["track"] == track):
            lo, hi = p["ci95"]
            lines.append(f"| {markdown_cell(p['eval'])} | {markdown_cell(p['system'])} | {markdown_cell(p['baseline'])} "
                         f"| {p['figure']} | {p['system_mean']:.2f} | {p['baseline_mean']:.2f} "
                         f"| {p['difference']:+.2f} [{lo:+.2f}, {hi:+.2f}] | {p['p_value']:.3f} "
                         f"| {p['p_holm']:.3f} ({p['family_size']}) | {_t_cell(p)} | {_verdict_cell(p['verdict'])} "
                         f"| {_seeds_cell(p)} | {p['wins']} / {p['losses']} | {p['questions']} | {p['units']} "
                         f"| {p.get('design_effect', 1.0):.2f} |")
        lines.append("")
    return "\n".join(lines)


def _verdict_cell(v: str) -> str:
    return {"above": "**above**", "one run": "*one run*", "fragile": "*fragile*"}.get(v, v)


def _t_cell(p: dict) -> str:
    t = p.get("seed_t")
    return "-" if not t else f"[{t['t_ci95'][0]:+.2f}, {t['t_ci95'][1]:+.2f}]"


def _seeds_cell(p: dict) -> str:
    return f"{p['seeds']}" if p["baseline_seeds"] is None else f"{p['seeds']} / {p['baseline_seeds']}"


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [(track, headline_name(system, baseline)) for track, system, baseline in HEADLINE_PAIRS]


def check_per_question(per_question: dict[str, dict], pairs: list[dict]) -> None:
    """Each system's mean over the per-question file's questions is its figure in the pairs: the file a user
    reads a question from holds the same scores the intervals were drawn from."""
    for p in pairs:
        rows = per_question.get(f"{p['track']}/{p['eval']}", {})
        scored = [r["systems"][p["system"]][p["figure"]] for r in rows.values()
                  if p["figure"] in r["systems"].get(p["system"], {})]
        if p["baseline"] == OWN_VS_OTHER or len(scored) != p["questions"]:
            continue  # an own-vs-other row, or a pair on a subset (the questions both systems answered)
        if abs(sum(scored) / len(scored) - p["system_mean"]) > 0.01:
            raise RuntimeError(f"per-question {p['system']} {p['figure']} on {p['eval']}: mean "
                               f"{sum(scored) / len(scored):.3f}, its pairs say {p['system_mean']}")


def run(params: Params) -> dict:
    eval_split = params.nlquad_baselines.eval_split
    for section in ("span_window", "longformer"):
        if getattr(params, section).eval_split != eval_split:
            raise ValueError(f"{section}.eval_split is {getattr(params, section).eval_split!r} but "
                             f"nlquad_baselines.eval_split is {eval_split!r}: a paired comparison needs one eval split")
    per_question: dict[str, dict] = {}
    pairs = with_verdicts(nlquad_pairs(eval_split, per_question=per_question)
                          + quail_pairs(params.quail.train_share, params.quail.seed, params.quail.exclude_from_heldout,
                                        per_question=per_question)
                          + strategyqa_pairs(per_question=per_question))
    check_per_question(per_question, pairs)
    write_json(PATHS.compare.per_question, per_question, indent=None)
    write_json(PATHS.compare.report, {"resamples": 2000, "confidence": 0.95, "units": UNITS,
                                      "multiple_comparisons": "Holm within each family (track, eval set, system, "
                                                              "figure); a verdict also needs the seed t-interval",
                                      "pairs": pairs})
    with atomic_output(PATHS.compare.table) as fh:
        fh.write(markdown(pairs))
    for track, system, baseline in HEADLINE_PAIRS:
        figures = {p["figure"]: p["difference"] for p in pairs
                   if (p["track"], p["system"], p["baseline"]) == (track, system, baseline)}
        if not figures:
            raise RuntimeError(f"no comparison of {system} with {baseline} in {track}")
        write_headline(track, headline_name(system, baseline), figures)
    for p in pairs:
        if (p["track"], p["system"], p["baseline"]) in set(HEADLINE_PAIRS):
            print(f"{p['track']} {p['eval']}: {p['system']} - {p['baseline']} {p['figure']} {p['difference']:+.2f} "
                  f"[{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}] {p['verdict']} ({p['seeds']} run(s))")
    return {"pairs": len(pairs), "above": sum(p["above"] for p in pairs),
            "above_95_uncorrected": sum(p["verdict_95"] == "above" for p in pairs),
            "fragile": sum(p["verdict"] == "fragile" for p in pairs),
            "one_run": sum(p["verdict"] == "one run" for p in pairs)}

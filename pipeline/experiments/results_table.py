"""The results tables of the README and docs, generated: figures are read, never typed.

Two tables: the default run's, from ``reports/compare.json``, and a GPU run's, from
``benchmarks/results/gpu_profile.json`` (what ``make gpu-import`` writes; its caption names the device). Each row is a trained system beside one baseline on the same questions: both figures, the paired difference
with its 95% interval, the training runs behind it, and the verdict ``compare`` gave (``above`` only when the
whole interval, over seeds and units, is above zero; none for a system trained once). The
README (the default run's, the calibration) and ``docs/results.md`` (the GPU run's) hold each table between two
markers, each in exactly one of them; ``--write`` replaces them there, ``--check`` fails when one differs
from what its source says (``tests/test_paired.py``). A source that is absent leaves its table out of the check
(a GPU profile exists only once a GPU has run).

    python -m pipeline.experiments.results_table [--write | --check] [README.md docs/results.md]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from pipeline.common.layout import PATHS
from pipeline.common.safe_text import markdown_cell

ROOT = Path(__file__).resolve().parents[2]
GPU_PROFILE = "benchmarks/results/gpu_profile.json"
EVAL_NAMES = {"test": "NLQuAD sample test", "dev": "NLQuAD sample dev", "dev_heldout": "QuAIL held-out dev",
              "challenge": "QuAIL challenge", "eval": "StrategyQA dev"}
# (track, eval, system, baseline, figures): the rows shown; reports/compare.md has every pair
ROWS = (
    ("nlquad", None, "span_window", "random_window", ("IoU", "F1", "EM")),
    ("nlquad", None, "span_window", "bm25l", ("IoU", "F1", "EM")),
    ("nlquad", None, "span_window", "position_prior", ("IoU", "F1")),  # question-blind control
    ("nlquad", None, "span_window", "shuffled_questions", ("IoU", "F1")),  # the same runs, questions shuffled
    ("nlquad", None, "span_window", "other_answers", ("IoU own-other",)),  # 0 for a model that ignores its question
    ("nlquad", None, "bm25l", "other_answers", ("IoU own-other",)),
    ("nlquad", None, "longformer", "random_window", ("IoU", "F1")),
    ("nlquad", None, "longformer", "bm25l", ("IoU", "F1")),
    ("quail", "dev_heldout", "mc_full", "longchoice", ("acc",)),
    ("quail", "dev_heldout", "mc_full", "pmi", ("acc",)),
    ("quail", "dev_heldout", "mc_full", "ir", ("acc",)),
    ("quail", "dev_heldout", "mc_full", "mc_options", ("acc",)),
    ("quail", "dev_heldout", "mc_full", "options_features", ("acc",)),  # options-only logit: no network
    ("quail", "dev_heldout", "mc_options", "random", ("acc",)),
    ("quail", "dev_heldout", "options_features", "random", ("acc",)),
    ("quail", "challenge", "mc_full", "longchoice", ("acc_challenge",)),
    ("quail", "challenge", "mc_full", "pmi", ("acc_challenge",)),
    ("quail", "challenge", "mc_full", "options_features", ("acc_challenge",)),
    ("strategyqa", "eval", "qa_ora_p", "majority", ("acc",)),
    ("strategyqa", "eval", "qa_ir_ora_d", "majority", ("acc",)),
    ("strategyqa", "eval", "qa_ir_d", "majority", ("acc",)),
    ("strategyqa", "eval", "qa_ir_q", "majority", ("acc",)),
    ("strategyqa", "eval", "qa_question_only", "majority", ("acc",)),
    ("strategyqa", "eval", "bow_question", "majority", ("acc",)),  # bag-of-words question-only control
    ("strategyqa", "eval", "qa_ora_p", "bow_question", ("acc",)),
    ("strategyqa", "eval", "qa_question_only", "bow_question", ("acc",)),
    ("strategyqa", "eval", "qa_ctl_facts", "majority", ("acc",)),
    ("strategyqa", "eval", "qa_ctl_facts", "qa_question_only", ("acc",)),  # the control against the paper's no-context row
    ("strategyqa", "eval", "qa_ctl_ora_p1", "majority", ("acc",)),
)


def _verdict(pair: dict) -> str:
    """The verdict compare gave (over seeds and units; ``one run``: a system trained once gets none); a pair
    from a run before seeds (a GPU profile) trained every system once, so it has none either."""
    shown = {"above": "**above**", "below": "below", "level": "level", "fragile": "*fragile*",
             "one run": "one run: no verdict"}
    if "verdict" in pair:
        return shown[pair["verdict"]]
    return shown["one run"]  # a run from before seeds (a GPU profile) trained each system once


def _holm(pair: dict) -> str:
    """The Holm-adjusted p and the family's size; '-' for a pair from a run before the correction."""
    if pair.get("p_holm") is None:
        return "-"
    return f"{pair['p_holm']:.3f} ({node_text(pair.get('family_size'))})"


def _seed_t(pair: dict) -> str:
    t = pair.get("seed_t")
    return "-" if not t else f"[{t['t_ci95'][0]:+.1f}, {t['t_ci95'][1]:+.1f}]"


def _runs(pair: dict) -> str:
    """Training runs behind the row: the system's, and a trained baseline's after a slash (escaped: a GPU
    node's profile is a stranger's file)."""
    if "seeds" not in pair:
        return "1"
    seeds = node_text(pair["seeds"])
    return seeds if pair.get("baseline_seeds") is None else f"{seeds} / {node_text(pair['baseline_seeds'])}"


def _sample(pair: dict) -> str:
    """What the interval resampled: ``435 / 24 texts``; a pair from before units were recorded resampled
    questions, and says so."""
    unit, units = pair.get("unit", "question"), pair.get("units", pair["questions"])
    if unit == "question":
        return f"{int(pair['questions'])} / questions"
    return f"{int(pair['questions'])} / {int(units)} {node_text(unit)}s"  # a node's profile is a stranger's file


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start (python -m pipeline.experiments.results_table --write) -->", f"<!-- {name}:end -->"


def table(pairs: list[dict], source: str = PATHS.compare.report, skip_missing: bool = False) -> str:
    """The ROWS found in ``pairs``; a row missing is an error, or left out with ``skip_missing`` (a run made
    before that system existed)."""
    lines = ["| eval set (questions / units resampled) | system | baseline | figure | system | baseline "
             "| difference [95% CI] | p Holm (m) | t over seeds | runs | system vs baseline |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for track, eval_set, system, baseline, figures in ROWS:
        for figure in figures:
            match = [p for p in pairs if p["track"] == track and p["system"] == system and p["baseline"] == baseline
                     and p["figure"] == figure and (eval_set is None or p["eval"] == eval_set)]
            if not match and skip_missing:
                continue
            if len(match) != 1:
                raise KeyError(f"{source} has {len(match)} rows for {track} {eval_set} {system} "
                               f"vs {baseline} {figure}")
            p = match[0]
            low, high = p["ci95"]
            lines.append(f"| {EVAL_NAMES[p['eval']]} ({_sample(p)}) | {system} | {baseline} | {figure} | "
                         f"{p['system_mean']:.1f} | {p['baseline_mean']:.1f} | {p['difference']:+.1f} "
                         f"[{low:+.1f}, {high:+.1f}] | {_holm(p)} | {_seed_t(p)} | {_runs(p)} | {_verdict(p)} |")
    return "\n".join(lines) + "\n"


_MARKDOWN_SYNTAX = str.maketrans({c: f"\\{c}" for c in "[]()*_~!#"})


def node_text(value: object) -> str:
    """A string a GPU node wrote (its device name, versions), for a Markdown cell: HTML escaped as
    :func:`markdown_cell` does, and Markdown's own syntax escaped too, so ``[x](http://...)`` or ``**`` stays text
    (no live link, no emphasis); a bare address gets its ``://`` broken, so no renderer links it either."""
    return markdown_cell(value).translate(_MARKDOWN_SYNTAX).replace("://", ":&#47;&#47;")


def _path_text(value: object) -> str:
    """A path a node names, as code when it is a plain path (letters, digits, ``./_-``), else escaped text: a
    backtick in a stranger's string would end the code span and let what follows render."""
    text = str(value)
    return f"`{text}`" if re.fullmatch(r"[\w./-]+", text) else node_text(text)


def gpu_table(profile: dict) -> str:
    """The GPU run's table under a caption naming the device, software and time, from the profile alone."""
    stages = profile.get("stages", {})
    trained = {k: v for k, v in stages.items() if v.get("tokens_per_s")}
    caption = (f"Device: **{node_text(profile['device'])}** (torch {node_text(profile.get('torch'))}, "
               f"transformers {node_text(profile.get('transformers'))}), profile "
               f"{_path_text(profile.get('profile'))}: {len(stages)} stages in "
               f"{profile.get('seconds_all_stages', 0) / 60:.1f} min, {len(trained)} trainings in bf16 at "
               f"{min(v['tokens_per_s'] for v in trained.values()) / 1e3:.0f}k-"
               f"{max(v['tokens_per_s'] for v in trained.values()) / 1e3:.0f}k training tokens/s "
               f"(`{GPU_PROFILE}`).\n\n") if trained else f"Device: **{node_text(profile['device'])}** (`{GPU_PROFILE}`).\n\n"
    pairs = profile["systems_vs_baselines"]
    if not any("unit" in p for p in pairs):
        # a run from before the settings took the paper's names and the intervals their unit: its "ir_d" retrieved
        # with the gold decompositions (the paper's IR-ORA-D), and every interval resampled questions
        pairs = [{**p, "system": "qa_ir_ora_d"} if p["system"] == "qa_ir_d" else p for p in pairs]
        caption += ("This run predates the settings' paper names and the cluster intervals: its IR-D row retrieved "
                    "with the gold decompositions, so it is shown as IR-ORA-D (`qa_ir_ora_d`), and its intervals "
                    "resample questions (QuAIL's and NLQuAD's are narrower than a text- or article-level "
                    "interval would be).\n\n")
    if not (profile.get("source") or {}).get("commit"):
        caption += ("This run recorded neither the commit it ran nor the sha256 of its per-question predictions (the "
                    "node did not record them yet; `python -m benchmarks.gpu_provenance`): its figures cannot be "
                    "traced to code or predictions here. A new run (`make gpu-bundle`, `make gpu-import`) records "
                    "both.\n\n")
    calibration = (profile.get("source") or {}).get("nlquad_calibration")
    if calibration is None:
        caption += ("Its NLQuAD rows come from an earlier offline sample whose question headings named their answer "
                    "section (71.5% of questions) and whose documents fit one window: they are not comparable with "
                    "the calibrated sample's rows above.\n\n")
    elif not calibration.get("within_tolerance"):
        drift = calibration.get("drift") or []
        caption += (f"Its NLQuAD build drifted outside the calibration's tolerances "
                    f"({', '.join(node_text(d) for d in (drift if isinstance(drift, list) else [drift]))}).\n\n")
    return caption + table(pairs, GPU_PROFILE, skip_missing=True)


def calibration_table(report: dict) -> str:
    """The NLQuAD build's calibration against the paper (``reports/nlquad.json``): each check, its value, the
    paper's and the tolerance, and a line that says loudly when the build drifted."""
    calibration = report["calibration"]
    lines = ["| check | this build | paper | tolerance | within |", "|---|---|---|---|---|"]
    for c in calibration["checks"]:
        value = c["value"] if "ci95" not in c else f"{c['value']:+.1f} [{c['ci95'][0]:+.1f}, {c['ci95'][1]:+.1f}]"
        paper = "-" if c["paper"] is None else c["paper"]
        lines.append(f"| {c['check']} | {value} | {paper} | {c['tolerance']} | {'yes' if c['ok'] else '**NO**'} |")
    by_kind = calibration.get("drift_by_kind") or {"cue": calibration["drift"]}
    said = {"shape": "it is not shaped like the paper's data",
            "cue": "its NLQuAD rows carry a cue the paper's data lacks",
            "signal": "it lacks the signal the paper's data has, so its models have little but position to learn"}
    verdict = ("Every check is within its tolerance." if calibration["within_tolerance"] else
               "**This build drifted outside the tolerances.** " + " ".join(
                   f"{' and '.join(f'`{n}`' for n in names)}: {said[kind]}." for kind, names in by_kind.items()
                   if names))
    anchor = calibration.get("by_lexical_anchor") or {}
    where = ""
    if anchor.get("anchored", {}).get("questions"):
        a, rest = anchor["anchored"], [anchor[g] for g in ("elsewhere", "no_term") if anchor[g]["questions"]]
        n_rest = sum(g["questions"] for g in rest)
        mean = lambda m: sum(g[m]["iou"] * g["questions"] for g in rest) / n_rest if n_rest else 0.0  # noqa: E731
        where = (f" Where BM25L and its oracle stand (IoU, `by_lexical_anchor`): on the {a['share_percent']:.0f}% of "
                 f"questions that share a term with their answer, BM25L {a['bm25l']['iou']:.1f}, the oracle "
                 f"{a['bm25l_oracle']['iou']:.1f}, the random window {a['random_window']['iou']:.1f}; on the rest, "
                 f"{mean('bm25l'):.1f}, {mean('bm25l_oracle'):.1f} and {mean('random_window'):.1f} (an answer-length "
                 f"window placed without a shared term seldom overlaps its answer). More shared terms raise both, the "
                 f"oracle faster.")
    return "\n".join(lines) + f"\n\n{verdict} ({report['documents']} documents, {report['questions']} questions; " \
        f"{calibration['scope']}.){where}\n"


STAGE_SECONDS = "benchmarks/results/stage_seconds.json"


def _wrapped(paragraph: str) -> str:
    """A generated paragraph wrapped as the README's prose is (a table row is never wrapped)."""
    import textwrap

    return textwrap.fill(paragraph, width=115, break_on_hyphens=False, break_long_words=False) + "\n"


def repro_cost(timing: dict) -> str:
    """The README's cost of ``make repro``, from the committed stage timings (``benchmarks.stage_seconds``): the
    whole run set-up included, ``dvc repro`` from first stage to last, and where the time goes."""
    later = set(timing.get("timed_later", []))  # stages added after the run: timed elsewhere, not in its totals
    stages = {k: v for k, v in timing["stages"].items() if k not in timing.get("carried_over", []) and k not in later}
    minutes = lambda s: f"{s / 60:.0f}" if s >= 600 else f"{s / 60:.1f}"  # noqa: E731
    training = sum(v for k, v in stages.items() if k.startswith("train_"))
    seeded = sum(v for k, v in stages.items() if k == "train_span" or k.startswith("train_quail_mc@"))
    predicting = sum(v for k, v in stages.items() if k.startswith("predict_"))
    around = (timing["log_span_s"] - timing["stage_total_s"]) / max(1, len(stages))
    cpu = timing.get("cpu") or {}
    how = ", ".join(filter(None, ["on a fresh clone" if timing.get("fresh_clone") else "",
                                  "with nothing else running" if timing.get("alone") else "while other work ran at times"]))
    processor = f"an {cpu['model']}" if cpu.get("model") else "this machine"
    bf16 = {True: " with native bfloat16", False: " without native bfloat16"}.get(cpu.get("native_bf16"), "")
    cache = {"warm": " with uv's package cache already filled", "cold": " from an empty uv package cache"}.get(
        timing.get("package_cache"), "")
    whole = (f"`make repro` {minutes(timing['make_repro_s'])} min, set-up included{cache}"
             if timing.get("make_repro_s") else "`make repro` (its set-up not timed)")
    # a stage DVC skipped because its inputs came out unchanged is not in the run's time; a rebuild whose bytes
    # differ runs it, so say how many there were and what they cost at their earlier times
    carried = [k for k in timing.get("carried_over", []) if k in timing["stages"]]
    skipped = ""
    if carried:
        cost = sum(timing["stages"][k] for k in carried) + around * len(carried)
        more = f"about {cost / 60:.0f} min" if cost >= 60 else f"about {cost:.0f} s"
        what = (f"{len(carried)} stages in that run, their inputs unchanged; a rebuild whose bytes differ runs them "
                f"too, {more} more at their earlier times") if len(carried) > 1 else (
                f"1 stage in that run ({carried[0]}), its inputs unchanged; a rebuild whose bytes differ runs it too, "
                f"{more} more at its earlier time")
        skipped = f" DVC skipped {what}."
    added = ""
    if later:  # stages added after the measured run: their own times, beside it
        extra = sum(timing["stages"][k] for k in later if k in timing["stages"]) + around * len(later)
        added = (f" The {len(later)} stages added since ({', '.join(sorted(later))}) take about {extra / 60:.0f} min "
                 f"more, timed in a later run.")
    return _wrapped(f"What they cost on two CPU cores: {whole} ({minutes(timing['log_span_s'])} min of `dvc repro` from its "
            f"first stage to its last, measured {how} on {processor}{bf16}; per stage in `{STAGE_SECONDS}`): "
            f"training {minutes(training)} min, of which the training runs of the span model and of each QuAIL "
            f"multiple-choice model (the systems whose rows carry a verdict) take {minutes(seeded)}, prediction "
            f"{minutes(predicting)}, and about {around:.0f} s around each stage.{skipped}{added}")


TEST_DURATIONS = "benchmarks/results/test_durations.json"


def test_cost(profile: dict) -> str:
    """The README's cost of ``make test``, from the committed profile of a whole run (``make test-durations``)."""
    machine = profile.get("machine") or {}
    where = f" of an {machine['processor']}" if machine.get("processor") else ""
    bf16 = {True: " with native bfloat16", False: " without native bfloat16"}.get(machine.get("avx512_bf16"), "")
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted((profile.get("outcomes") or {}).items()))
    return _wrapped(f"What they cost on two cores{where}{bf16}: `make test` {profile['seconds_wall'] / 60:.1f} min of pytest "
            f"({profile['tests']} tests on {profile['workers']} pytest-xdist workers: {outcomes}; `TEST_WORKERS=0` "
            f"for one process), of which the tests not marked slow, what `make test-fast` runs, take "
            f"{profile['seconds_not_slow'] / 60:.1f} of the {profile['seconds_total'] / 60:.0f} test-minutes "
            f"(`{TEST_DURATIONS}`, measured by `make test-durations`).")


def blocks(root: Path = ROOT) -> dict[str, str]:
    """Each README block's new text, by marker name; a block whose source is absent is left out."""
    out = {"results": table(json.loads((root / PATHS.compare.report).read_text(encoding="utf-8"))["pairs"])}
    nlquad = json.loads((root / PATHS.build_nlquad.report).read_text(encoding="utf-8"))
    if "calibration" in nlquad:
        out["nlquad-calibration"] = calibration_table(nlquad)
    tests = root / TEST_DURATIONS
    if tests.exists():
        out["test-cost"] = test_cost(json.loads(tests.read_text(encoding="utf-8")))
    timing = root / STAGE_SECONDS
    if timing.exists():
        out["repro-cost"] = repro_cost(json.loads(timing.read_text(encoding="utf-8")))
    from pipeline.experiments.readings import readings

    out["readings"] = readings(root)
    gpu = root / GPU_PROFILE
    if gpu.exists():
        out["gpu-results"] = gpu_table(json.loads(gpu.read_text(encoding="utf-8")))
    from pipeline.experiments.metrics_table import render

    view = render(root / PATHS.metrics)
    if view:  # what `make results` prints, as the docs show it
        out["metrics-view"] = f"```\n{view}\n```\n"
    return out


def replace_block(text: str, block: str, name: str = "results") -> str:
    start, end = markers(name)
    if start not in text or end not in text:
        raise ValueError(f"the README has no {start} ... {end} block")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{block}{end}{tail}"


# where the blocks live: each block in exactly one of them
DOCUMENTS = ("README.md", "docs/results.md", "docs/experiments.md")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="replace the tables in the README and docs/results.md")
    mode.add_argument("--check", action="store_true", help="fail when a table differs from the reports")
    ap.add_argument("documents", nargs="*", help=f"the files holding the blocks (default: {', '.join(DOCUMENTS)})")
    ap.add_argument("--root", type=Path, default=ROOT,
                    help="the checkout whose reports the blocks come from (default: this one); a tree exported from "
                         "a commit checks the committed README against the committed reports")
    args = ap.parse_args(argv)
    new_blocks = blocks(args.root)
    if not (args.write or args.check):
        print("\n".join(new_blocks.values()), end="")
        return 0
    paths = [Path(d) for d in args.documents] or [args.root / d for d in DOCUMENTS]
    texts = {path: path.read_text(encoding="utf-8") for path in paths}
    new = dict(texts)
    for name, block in new_blocks.items():
        holders = [path for path, text in texts.items() if markers(name)[0] in text]
        if len(holders) != 1:
            print(f"block {name}: in {len(holders)} of {', '.join(map(str, paths))}; it belongs in exactly one",
                  file=sys.stderr)
            return 2
        new[holders[0]] = replace_block(new[holders[0]], block, name)
    changed = [path for path in paths if new[path] != texts[path]]
    if args.check:
        if changed:
            print(f"{', '.join(map(str, changed))}: a results table differs from {PATHS.compare.report} or "
                  f"{GPU_PROFILE}; run python -m pipeline.experiments.results_table --write", file=sys.stderr)
            return 1
        return 0
    for path in changed:
        path.write_text(new[path], encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

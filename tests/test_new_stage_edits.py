"""The edit counts the README states for a new stage, made in a throw-away copy exactly as written there: three
edits for the stage (its module, its row in the stage table, its outputs in paths.yaml), two more for settings
of its own (its model in a package's config.py with each field marked and given a default, its line in
Params), then the generator, which drafts the dvc.yaml entry and the params.yaml section. The copy must then
pass the layout and graph checks ``make test`` runs, run the stage, and let a run set the new science key (and
only that one). The same for a new trained model of a family (three edits) and a model family of its own
(eight), and a new QuAIL baseline (four files).

All four are made in one copy, one after another with a commit between them, so each count is its own (git
sees only that case's edits), and the wiring checks ``make test`` runs are run once over all of them: a
copy and that run are most of what each case costs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow  # four sets of edits in one copy, then four test files there

MODULE = '''\
"""``word_count``: an example stage (tests/test_new_stage_edits.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    out = {"min_len": params.word_count.min_len}
    write_json(PATHS.word_count.report, out)
    return out
'''

DRAFTED_ENTRY = {  # what the generator must write: the params stamp, its own section, its report in git
    "cmd": "python -m flows.stage word_count",
    "params": ["word_count"],
    "outs": [{"${paths.word_count.report}": {"cache": False, "persist": True}}],
}

SECTION_MODEL = '''


class WordCountParams(StrictModel):
    """The example stage's settings."""

    min_len: Science[int] = Field(default=3, ge=1)
    where: Infrastructure[str] = "reports"
'''


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{path}: {old!r}"
    path.write_text(text.replace(old, new))


GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]


def _copy(repo: Path, tmp_path: Path) -> Path:
    """The tracked files in a fresh git repository, committed."""
    copy = tmp_path / "copy"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, text=True,
                             check=True).stdout.split("\0")
    for rel in filter(None, tracked):
        if (repo / rel).is_file() and not (repo / rel).is_symlink():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / rel, copy / rel)
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=copy, check=True)
    subprocess.run([*GIT, "commit", "-qm", "the checkout before the edits"], cwd=copy, check=True)
    return copy


def _python(copy: Path, *args: str) -> str:
    res = subprocess.run([sys.executable, *args], cwd=copy, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, f"{args}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def _commit(copy: Path, message: str) -> None:
    subprocess.run([*GIT, "add", "-A"], cwd=copy, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=copy, check=True)


WIRING_TESTS = ("tests/test_layout.py", "tests/test_dvc_graph.py", "tests/test_params_trust.py", "tests/test_layers.py")


def _make_test_passes(repo: Path, copy: Path, extra_tests: tuple[str, ...] = (),
                      before_a_run: tuple[str, ...] = ()) -> None:
    """What `make test` checks of a stage's wiring, on the copy as committed (the tests read committed params);
    ``before_a_run``: the tests that compare the committed run's files, left out where the new stage's files
    come only from running it."""
    (copy / ".venv").symlink_to(repo / ".venv")  # for the tests that run the checkout's dvc
    left_out = ["-k", " and ".join(f"not {name}" for name in before_a_run)] if before_a_run else []
    out = _python(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", *left_out,
                  *extra_tests, *WIRING_TESTS)
    assert " passed" in out and "failed" not in out, out[-2000:]


def _a_new_stage_with_settings(repo: Path, copy: Path) -> tuple[str, ...]:
    """Five edits and the generator; the stage runs and a run may set its science key (and only that)."""
    readme = (repo / "README.md").read_text()
    assert re.search(r"a new one takes three edits[\s\S]{0,200}?five\s+with settings of its own", readme), \
        "the README's count changed: change this test's edits with it"

    # the stage: 1 its module, 2 its row, 3 its outputs
    (copy / "pipeline/stages/word_count.py").write_text(MODULE)
    _edit(copy / "pipeline/stage_table.py", '    "model_cards": Stage("model_cards"),\n',
          '    "model_cards": Stage("model_cards"),\n    "word_count": Stage("word_count"),\n')
    with (copy / "paths.yaml").open("a") as fh:
        fh.write("  word_count:\n    report: reports/word_count.json\n")
    # its settings: 4 its model (fields marked, with defaults), 5 its line in Params (with its import)
    config = copy / "pipeline/wiki/config.py"
    config.write_text(config.read_text().rstrip("\n") + SECTION_MODEL)
    assert "from pipeline.common.trust import Infrastructure, Science\n" in config.read_text()  # already there
    params_py = copy / "pipeline/params.py"
    _edit(params_py, "from pipeline.wiki.config import WikiParams\n",
          "from pipeline.wiki.config import WikiParams, WordCountParams\n")
    _edit(params_py, "    schedule: ScheduleParams\n",
          "    schedule: ScheduleParams\n    word_count: WordCountParams\n")
    params_before = (copy / "params.yaml").read_text()

    def python(*args: str) -> str:
        return _python(copy, *args)

    res = subprocess.run([sys.executable, "-m", "pipeline.experiments.stage_deps", "--check"], cwd=copy,
                         capture_output=True, text=True)
    assert res.returncode == 1 and "word_count" in res.stderr, res.stderr  # --check names what is missing
    python("-m", "pipeline.experiments.stage_deps")  # the generator: the entry, the section, code deps
    python("-m", "pipeline.experiments.stage_deps", "--check")
    params_after = (copy / "params.yaml").read_text()
    assert params_after.startswith(params_before)  # the user's file above the new section, byte for byte
    assert yaml.safe_load(params_after)["word_count"] == {"min_len": 3, "where": "reports"}
    entry = yaml.safe_load((copy / "dvc.yaml").read_text())["stages"]["word_count"]
    assert {k: entry[k] for k in DRAFTED_ENTRY} == DRAFTED_ENTRY
    assert entry["deps"][0] == "${paths.check_params.stamp}" and "pipeline/stages/word_count.py" in entry["deps"]
    python("-c", "from pipeline import stage_table\nfrom pipeline.params import load_params\n"
                 "assert stage_table.run('word_count', load_params()) == {'min_len': 3}")
    assert (copy / "reports/word_count.json").read_text().split() == ["{", '"min_len":', "3", "}"]
    python("-c", textwrap.dedent("""\
        from pipeline.params_trust import NotRunSettable, check_run_settable
        check_run_settable({"word_count.min_len": 5})
        try:
            check_run_settable({"word_count.where": "/etc"})
        except NotRunSettable:
            pass
        else:
            raise SystemExit("a run set an Infrastructure key")
        """))
    _commit(copy, "word_count")
    return ()


# the tests that compare the committed run's files with the declared ones: a new trained model's metrics/ files
# and card come only from `dvc repro` running it, which the copy does not
BEFORE_A_RUN = ("test_headline_outs_come_from_the_registries_and_name_every_headline_file",
                "test_metrics_are_the_headline_files_and_plots_live_under_plots",
                "test_the_committed_run_wrote_every_card")

NEW_VARIANT = "full_first"  # the passage's first words instead of its sentences most related to question + options
VARIANT_GROUP = """\
    full_first:
      model_dir: models/quail_mc_full_first
      model: models/quail_mc_full_first/final
      seeds_dir: models/quail_mc_full_first/seeds
      live: dvclive/quail_mc_full_first
      train_report: reports/train_quail_mc_full_first.json
      predictions: data/predictions/quail/mc_full_first.json
      predict_report: reports/predict_quail_mc_full_first.json
      report: reports/quail_mc_full_first.json
"""


def _a_new_trained_model_of_a_family(repo: Path, copy: Path) -> tuple[str, ...]:
    """Three edits and the generator. A new QuAIL input variant: its own model trained, predicted, scored, compared, carded and taken to the
    GPU node. The train/predict/evaluate stages are dvc.yaml's foreach over its paths.yaml group; compare,
    difficulty and the cards loop over the variants, and the generator adds what they now name to their
    entries and its card (in its model folder) to the cards' outs."""
    readme = (repo / "README.md").read_text()
    assert re.search(r"new\s+trained\s+model\s+of\s+a\s+family[\s\S]{0,200}?three\s+edits", readme), \
        "the README's count changed: change this test's edits with it"
    # 1 its name in the registry, 2 its input, 3 its outputs
    _edit(copy / "pipeline/quail/systems.py", '"question_options", "options")',
          f'"question_options", "options", "{NEW_VARIANT}")')
    _edit(copy / "pipeline/quail/mc_model.py", '    if variant == "options":\n',
          f'    if variant == "{NEW_VARIANT}":\n'
          '        passage = " ".join(q.context.split()[:max_words])\n'
          '        return [passage] * len(q.options), [f"{q.question} {o}" for o in q.options]\n'
          '    if variant == "options":\n')
    _edit(copy / "paths.yaml", "      report: reports/quail_mc_options.json\n",
          "      report: reports/quail_mc_options.json\n" + VARIANT_GROUP)

    res = subprocess.run([sys.executable, "-m", "pipeline.experiments.stage_deps", "--check"], cwd=copy,
                         capture_output=True, text=True)
    assert res.returncode == 1, res.stderr
    _python(copy, "-m", "pipeline.experiments.stage_deps")
    _python(copy, "-m", "pipeline.experiments.stage_deps", "--check")
    stages = yaml.safe_load((copy / "dvc.yaml").read_text())["stages"]
    predictions = f"${{paths.quail_mc.{NEW_VARIANT}.predictions}}"
    for reader in ("compare", "difficulty"):
        assert predictions in stages[reader]["deps"], reader
    assert f"${{paths.quail_mc.{NEW_VARIANT}.model}}" in stages["model_cards"]["deps"]
    assert {f"${{paths.quail_mc.{NEW_VARIANT}.model_dir}}/README.md": {"cache": False, "persist": True}} \
        in stages["model_cards"]["outs"]  # its card, beside its final/
    assert {f"${{paths.metrics}}/quail/mc_full-{NEW_VARIANT}.json": {"cache": False, "persist": True}} \
        in stages["compare"]["outs"]  # its headline row against the full model
    _python(copy, "-c", textwrap.dedent(f"""\
        from pipeline.offline.node import MODEL_CHAINS
        from pipeline.quail.mc_model import pair_texts
        from pipeline.quail.data import MCQuestion
        assert ("train_quail_mc@{NEW_VARIANT}", "predict_quail_mc@{NEW_VARIANT}",
                "evaluate_quail_mc@{NEW_VARIANT}") in MODEL_CHAINS
        q = MCQuestion(**{{f: None for f in MCQuestion.__dataclass_fields__}} | dict(
            context="one two three four five", question="Which?", options=["a", "b", "c", "d"]))
        assert pair_texts(q, "{NEW_VARIANT}", 3) == (["one two three"] * 4, ["Which? a", "Which? b", "Which? c",
                                                                            "Which? d"])
        """))
    _commit(copy, NEW_VARIANT)
    return BEFORE_A_RUN


TOY_MODULES = {  # an NLQuAD model family of its own: it learns how long an answer is and answers with that many
    # words from the start of the article (a wiring example: the test drafts, checks and imports it, never runs it)
    "train_toy": '''\
"""``train_toy``: the median answer length (words) on the training split (tests/test_new_stage_edits.py)."""

from __future__ import annotations

import json
import statistics
from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    data = json.loads(PATHS.split.train.read_text(encoding="utf-8"))["data"]
    lengths = [len(qa["answers"][0]["text"].split()) for a in data for p in a["paragraphs"] for qa in p["qas"]]
    model = {"words": int(statistics.median(lengths)) if lengths else params.toy.default_words}
    write_json(PATHS.train_toy.model / "model.json", model)
    write_json(PATHS.train_toy.report, model)
    return model
''',
    "predict_toy": '''\
"""``predict_toy``: each eval question answered with the article's first words (tests/test_new_stage_edits.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    words = json.loads((PATHS.train_toy.model / "model.json").read_text(encoding="utf-8"))["words"]
    data = json.loads((PATHS.split.dir / f"{params.toy.eval_split}.json").read_text(encoding="utf-8"))["data"]
    answers = {qa["id"]: " ".join(p["context"].split()[:words])
               for a in data for p in a["paragraphs"] for qa in p["qas"]}
    write_json(PATHS.predict_toy.predictions, answers)
    return {"questions": len(answers)}
''',
    "evaluate_toy": '''\
"""``evaluate_toy``: EM, F1 and IoU of the toy answers (tests/test_new_stage_edits.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.common.headline import span_figures
from pipeline.common.layout import PATHS
from pipeline.common.model_card import ModelCard
from pipeline.common.scoring import write_scores
from pipeline.nlquad.metrics import evaluate

if TYPE_CHECKING:
    from pipeline.params import Params


def headlines() -> list[tuple[str, str]]:
    return [("nlquad", "toy")]


def card() -> ModelCard:
    return ModelCard("First words (NLQuAD)", "nlquad", "toy", "toy", "train_toy", PATHS.evaluate_toy.report,
                     "the article's first words, as many as the median training answer", "NLQuAD's training split",
                     "json.load")


def run(params: Params) -> dict:
    answers = json.loads(PATHS.predict_toy.predictions.read_text(encoding="utf-8"))
    dataset = json.loads((PATHS.split.dir / f"{params.toy.eval_split}.json").read_text(encoding="utf-8"))
    summary, _ = evaluate(answers, dataset)
    training = json.loads(PATHS.train_toy.report.read_text(encoding="utf-8"))
    write_scores(PATHS.evaluate_toy.report, {**summary, "training": training}, *headlines()[0],
                 span_figures(summary), training)
    return summary
''',
}
TOY_PATHS = """\
  train_toy:
    model_dir: models/toy
    model: models/toy/final
    report: reports/train_toy.json
  predict_toy:
    predictions: data/predictions/toy.json
  evaluate_toy:
    report: reports/toy.json
"""
TOY_SECTION = '''


class ToyParams(StrictModel):
    """The toy family's settings."""

    eval_split: Science[Literal["dev", "test"]] = "test"
    default_words: Science[int] = Field(default=30, ge=1)
'''


def _a_model_family_of_its_own(repo: Path, copy: Path) -> tuple[str, ...]:
    """Eight edits and the generator. A new model family (its own train, predict and evaluate modules) on NLQuAD: trained, predicted, scored,
    compared with the window baselines, carded and taken to the GPU node. Its stages read by name, so the
    generator drafts their entries; compare and the cards reach it through what they already loop over."""
    readme = (repo / "README.md").read_text()
    assert re.search(r"model\s+family\s+of\s+its\s+own[\s\S]{0,200}?takes\s+eight", readme), \
        "the README's count changed: change this test's edits with it"
    # 1-3 its modules (the evaluate module declares its headline row and its card)
    for name, text in TOY_MODULES.items():
        (copy / f"pipeline/stages/{name}.py").write_text(text)
    # 4 its rows in the stage table
    _edit(copy / "pipeline/stage_table.py", '    "model_cards": Stage("model_cards"),\n',
          '    "model_cards": Stage("model_cards"),\n    "train_toy": Stage("train_toy", trains=True),\n'
          '    "predict_toy": Stage("predict_toy", trains=True),\n'
          '    "evaluate_toy": Stage("evaluate_toy", trains=True, card="pipeline.stages.evaluate_toy:card"),\n')
    # 5 their outputs in paths.yaml
    _edit(copy / "paths.yaml", "  # a trained model's card:", TOY_PATHS + "  # a trained model's card:")
    # 6 its section model, 7 its line in Params
    config = copy / "pipeline/span_qa/config.py"
    config.write_text(config.read_text().rstrip("\n") + TOY_SECTION)
    params_py = copy / "pipeline/params.py"
    _edit(params_py, "    longformer: LongformerParams\n", "    longformer: LongformerParams\n    toy: ToyParams\n")
    _edit(params_py, "LongformerParams, ", "LongformerParams, ToyParams, ")
    # 8 its pairs in compare: one more NLQuAD system against the window baselines
    _edit(copy / "pipeline/stages/compare.py", 'SPAN_SYSTEMS = ("span_window", "longformer")',
          'SPAN_SYSTEMS = ("span_window", "longformer", "toy")')

    _python(copy, "-m", "pipeline.experiments.stage_deps")
    _python(copy, "-m", "pipeline.experiments.stage_deps", "--check")
    assert yaml.safe_load((copy / "params.yaml").read_text())["toy"] == {"eval_split": "test", "default_words": 30}
    stages = yaml.safe_load((copy / "dvc.yaml").read_text())["stages"]
    assert "${paths.train_toy.model}" in stages["predict_toy"]["deps"]
    assert "${paths.predict_toy.predictions}" in stages["evaluate_toy"]["deps"]
    assert "${paths.train_toy.model}" in stages["train_toy"]["outs"]
    assert {"${paths.metrics}/nlquad/toy.json": {"cache": False, "persist": True}} in stages["evaluate_toy"]["outs"]
    cards = stages["model_cards"]
    assert {"${paths.train_toy.model}", "${paths.evaluate_toy.report}"} <= set(cards["deps"])
    assert "toy" in cards["params"]
    assert {"${paths.train_toy.model_dir}/README.md": {"cache": False, "persist": True}} in cards["outs"]
    assert "pipeline/stages/evaluate_toy.py" in cards["deps"]  # the card's text is a code dep of the cards
    assert "${paths.predict_toy.predictions}" in stages["compare"]["deps"]
    for baseline in ("random", "bm25l"):
        assert {f"${{paths.metrics}}/nlquad/toy-{baseline}.json": {"cache": False, "persist": True}} \
            in stages["compare"]["outs"]
    _python(copy, "-c", textwrap.dedent("""\
        from pipeline.offline.node import MODEL_CHAINS
        assert ("train_toy", "predict_toy", "evaluate_toy") in MODEL_CHAINS, MODEL_CHAINS
        from pipeline.stages.model_cards import cards
        assert [c.card.as_posix() for c in cards() if c.system == "toy"] == ["models/toy/README.md"]
        from pipeline.params_trust import check_run_settable
        check_run_settable({"toy.default_words": 20})
        """))
    _commit(copy, "toy")
    return BEFORE_A_RUN


# --- a new QuAIL baseline ---------------------------------------------------------------------------------

BASELINE_TEST = "tests/test_shortest.py"

FUNCTION = '''

def baseline_shortest(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    """The shortest option (an example baseline: tests/test_new_baseline_edits.py)."""
    return {q.qid: min(range(len(q.options)), key=lambda i: (len(q.options[i]), i)) for q in questions}
'''

TEST = '''from pipeline.quail.baselines import baselines


def test_shortest_is_declared():
    assert "shortest" in baselines()
'''


def _a_new_quail_baseline(copy: Path) -> tuple[str, ...]:
    """Four files, as docs/stages.md says: its function in ``pipeline/quail/baselines.py``, its name in
    ``pipeline/quail/systems.py``, a test and a sentence of docs; then the generator adds its headline row to
    dvc.yaml. The copy's ``quail_baselines`` scores it on dev and the challenge set and writes its headline row:
    compare, the per-question file and ``make results`` read the names from the declaration, so nothing else
    names it."""
    baselines = copy / "pipeline/quail/baselines.py"
    baselines.write_text(baselines.read_text() + FUNCTION)
    _edit(copy / "pipeline/quail/systems.py", '"ir", "options_features")', '"ir", "options_features", "shortest")')
    (copy / BASELINE_TEST).write_text(TEST)
    _edit(copy / "docs/stages.md", "\n## How long it takes", "\nShortest: the shortest option (an example).\n\n## How long it takes")
    edited = subprocess.run(["git", "status", "--porcelain"], cwd=copy, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    assert len(edited) == 4, edited
    _python(copy, "-m", "pipeline.experiments.stage_deps")
    changed = subprocess.run(["git", "diff", "--name-only"], cwd=copy, capture_output=True, text=True,
                             check=True).stdout.split()
    assert set(changed) == {"pipeline/quail/baselines.py", "pipeline/quail/systems.py", "docs/stages.md",
                            "dvc.yaml"}, changed
    assert "${paths.metrics}/quail/shortest.json" in (copy / "dvc.yaml").read_text()
    _python(copy, "-c", "from pipeline.params import load_params; from pipeline.stages import quail_baselines; "
                        "quail_baselines.run(load_params())")
    predictions = json.loads((copy / "data/predictions/quail/baselines.json").read_text())
    assert {name: "shortest" in systems for name, systems in predictions.items()} == {"dev": True, "challenge": True}
    row = json.loads((copy / "metrics/quail/shortest.json").read_text())
    assert 0 <= row["acc"] <= 100 and 0 <= row["acc_challenge"] <= 100
    _commit(copy, "a new QuAIL baseline")
    return ()


def test_each_documented_edit_count_holds_and_the_wiring_checks_pass_in_a_copy(repo, shared, tmp_path):
    """A QuAIL baseline (four files), a stage with settings (five edits), a trained model of a family (three) and
    a family of its own (eight), one after another in one copy, then the wiring checks over all of them."""
    copy = _copy(repo, tmp_path)
    (tmp_path / "shared").symlink_to(shared)  # ../shared, as the checkout sees it: the baseline's stage runs
    left_out = list(_a_new_quail_baseline(copy))
    for case in (_a_new_stage_with_settings, _a_new_trained_model_of_a_family, _a_model_family_of_its_own):
        left_out += case(repo, copy)
    _make_test_passes(repo, copy, extra_tests=(BASELINE_TEST,), before_a_run=tuple(dict.fromkeys(left_out)))

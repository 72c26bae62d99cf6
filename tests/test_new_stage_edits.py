"""The edit counts the README states for a new stage, made in a throw-away copy exactly as written there: three
edits for the stage (its module, its row in the stage table, its outputs in paths.yaml), two more for settings
of its own (its model in a package's config.py with each field marked and given a default, its line in
Params), then the generator, which drafts the dvc.yaml entry and the params.yaml section. The copy must then
pass the layout and graph checks ``make test`` runs, run the stage, and let a run set the new science key (and
only that one)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow  # runs two test files in a copy

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


def _make_test_passes(repo: Path, copy: Path, message: str, before_a_run: tuple[str, ...] = ()) -> None:
    """What `make test` checks of a stage's wiring, on the copy as committed (the tests read committed params);
    ``before_a_run``: the tests that compare the committed run's files, left out where the new stage's files
    come only from running it."""
    subprocess.run([*GIT, "add", "-A"], cwd=copy, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=copy, check=True)
    (copy / ".venv").symlink_to(repo / ".venv")  # for the tests that run the checkout's dvc
    left_out = ["-k", " and ".join(f"not {name}" for name in before_a_run)] if before_a_run else []
    out = _python(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", *left_out,
                  "tests/test_layout.py", "tests/test_dvc_graph.py", "tests/test_params_trust.py",
                  "tests/test_layers.py")
    assert " passed" in out and "failed" not in out, out[-2000:]


def test_a_new_stage_with_settings_is_the_documented_five_edits_and_the_generator(repo, tmp_path):
    readme = (repo / "README.md").read_text()
    assert re.search(r"a new one takes three edits[\s\S]{0,200}?five\s+with settings of its own", readme), \
        "the README's count changed: change this test's edits with it"
    copy = _copy(repo, tmp_path)

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
    _make_test_passes(repo, copy, "word_count")


NEW_VARIANT = "full_first"  # the passage's first words instead of its sentences most related to question + options
VARIANT_GROUP = """\
    full_first:
      model_dir: models/quail_mc_full_first
      model: models/quail_mc_full_first/final
      live: dvclive/quail_mc_full_first
      train_report: reports/train_quail_mc_full_first.json
      predictions: data/predictions/quail/mc_full_first.json
      predict_report: reports/predict_quail_mc_full_first.json
      report: reports/quail_mc_full_first.json
"""


def test_a_new_trained_model_of_a_family_is_the_documented_three_edits_and_the_generator(repo, tmp_path):
    """A new QuAIL input variant: its own model trained, predicted, scored, compared, carded and taken to the
    GPU node. The train/predict/evaluate stages are dvc.yaml's foreach over its paths.yaml group; compare,
    difficulty and the cards loop over the variants, and the generator adds what they now name to their
    entries and its card (in its model folder) to the cards' outs."""
    readme = (repo / "README.md").read_text()
    assert re.search(r"new\s+trained\s+model\s+of\s+a\s+family[\s\S]{0,200}?three\s+edits", readme), \
        "the README's count changed: change this test's edits with it"
    copy = _copy(repo, tmp_path)
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
    # the metrics/ files and cards of the committed run are the declared ones once `dvc repro` has run the new model
    _make_test_passes(repo, copy, NEW_VARIANT, before_a_run=(
        "test_headline_outs_come_from_the_registries_and_name_every_headline_file",
        "test_metrics_are_the_headline_files_and_plots_live_under_plots",
        "test_the_committed_run_wrote_every_card"))

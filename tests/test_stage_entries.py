"""The generator's drafts of a new stage's dvc.yaml entry and params.yaml section (pipeline/experiments/
stage_entries.py): what a module names becomes its deps, params and outs; what it cannot see is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline import stage_table
from pipeline.experiments.stage_entries import DraftError, append_sections, draft_entry, missing_sections
from pipeline.stage_table import Stage

PATHS_YAML = """\
paths:
  split:
    dir: data/nlquad/splits
    report: reports/split.json
  tally:
    counts: data/tally/counts.jsonl
    report: reports/tally.json
    plot: plots/tally.csv
    seeds_dir: models/tally/seeds
"""

MODULE = """\
from pipeline.common.layout import PATHS


def run(params):
    rows = (PATHS.split.dir / "train.json").read_text()
    p = params.quail
    return params.tally.min_len, params.split.seed, p.seed, PATHS.tally.counts, PATHS.tally.report
"""


def _repo(tmp_path: Path, module: str = MODULE) -> Path:
    (tmp_path / "pipeline/stages").mkdir(parents=True)
    (tmp_path / "paths.yaml").write_text(PATHS_YAML)
    (tmp_path / "pipeline/stages/tally.py").write_text(module)
    return tmp_path


@pytest.fixture
def tally(monkeypatch):
    monkeypatch.setitem(stage_table.STAGES, "tally", Stage("tally"))


def test_the_draft_declares_what_the_module_names(tmp_path, tally):
    entry = draft_entry(_repo(tmp_path), "tally")
    assert entry == {
        "cmd": "python -m flows.stage tally",
        "deps": ["${paths.check_params.stamp}", "${paths.split.dir}"],  # another stage's entry: a dep
        "params": ["tally", "quail.seed", "split.seed"],  # its own section whole, single keys of the others
        "outs": ["${paths.tally.counts}",  # data: DVC's cache; reports and plots: git, kept while it runs
                 {"${paths.tally.report}": {"cache": False, "persist": True}},
                 {"${paths.tally.plot}": {"cache": False, "persist": True}},
                 # the other seeds' runs (their checkpoints): DVC's cache, kept while it reruns, so they resume
                 {"${paths.tally.seeds_dir}": {"persist": True}}],
    }


def test_what_cannot_be_drafted_is_refused_by_name(tmp_path, tally, monkeypatch):
    repo = _repo(tmp_path, MODULE.replace("PATHS.split.dir", "PATHS.split.nowhere"))
    with pytest.raises(DraftError, match=r"PATHS\.split\.nowhere is not in paths.yaml"):
        draft_entry(repo, "tally")
    monkeypatch.setitem(stage_table.STAGES, "tally", Stage("tally", variants="pipeline.quail.systems:MC_VARIANTS"))
    with pytest.raises(DraftError, match="write its dvc.yaml entry by hand"):
        draft_entry(repo, "tally")
    monkeypatch.setitem(stage_table.STAGES, "untallied", Stage("tally"))
    with pytest.raises(DraftError, match="paths.yaml has no `untallied:` group"):
        draft_entry(repo, "untallied")


def test_a_missing_section_gets_its_defaults_and_the_file_above_it_is_kept(tmp_path, monkeypatch):
    from pydantic import Field

    from pipeline import params as schema
    from pipeline.common.strict_model import StrictModel
    from pipeline.common.trust import Infrastructure, Science

    class TallyParams(StrictModel):
        min_len: Science[int] = Field(default=3, ge=1)
        where: Infrastructure[str] = "reports"

    class WithTally(schema.Params):
        tally: TallyParams

    repo = tmp_path
    committed = (Path(__file__).resolve().parents[1] / "params.yaml").read_text()
    (repo / "params.yaml").write_text(committed)
    monkeypatch.setattr(schema, "Params", WithTally)
    sections = missing_sections(repo)
    assert sections == {"tally": {"min_len": 3, "where": "reports"}}
    append_sections(repo, sections)
    text = (repo / "params.yaml").read_text()
    assert text.startswith(committed.rstrip("\n") + "\n")
    assert schema.load_params(repo / "params.yaml").tally.min_len == 3  # the whole file validates with it
    assert missing_sections(repo) == {}

    class NoDefault(StrictModel):
        min_len: Science[int]

    class Without(schema.Params):
        untallied: NoDefault

    monkeypatch.setattr(schema, "Params", Without)
    with pytest.raises(DraftError, match=r"NoDefault\.min_len has no default"):
        missing_sections(repo)


def test_an_entry_grows_by_what_its_module_names_and_it_lacks(tmp_path, tally):
    from pipeline.experiments.stage_entries import lacking

    repo = _repo(tmp_path)
    assert lacking(repo, "tally", ["${paths.check_params.stamp}"], ["tally"], []) == (
        ["${paths.split.dir}"], ["quail.seed", "split.seed"])
    # a declared folder around it, a declared section, a key in params.yaml's own list: nothing lacks
    (repo / "paths.yaml").write_text(PATHS_YAML.replace("    dir: data/nlquad/splits\n",
                                                        "    dir: data/nlquad/splits\n    root: data/nlquad\n"))
    assert lacking(repo, "tally", ["${paths.split.root}"], ["tally", "quail", {"params.yaml": ["split.seed"]}],
                   []) == ([], [])
    assert lacking(repo, "tally", ["${paths.split.root}"], ["tally", "quail", {"other.yaml": ["split.seed"]}],
                   []) == ([], ["split.seed"])  # a key of another file is another setting

"""dvc.yaml wiring: every stage runs its own Prefect flow, declares its code and reads only known params."""

from __future__ import annotations

import pytest

import importlib
from pathlib import Path

import yaml

from pipeline.params import Params
from pipeline.experiments.stage_deps import code_deps, project_files, stage_module, update
from tests.params_files import PROJECT_PARAMS


def _dvc(repo: Path) -> dict:
    """dvc.yaml as DVC reads it: ``foreach`` stages expanded (``name@key``) and every ``${...}`` (paths.yaml,
    params.yaml) filled in, by DVC's own resolver."""
    from dvc.dvcfile import load_file
    from dvc.repo import Repo

    resolver = load_file(Repo(str(repo)), "dvc.yaml").resolver
    return {"stages": resolver.resolve()["stages"], "metrics": resolver.resolve_metrics(),
            "plots": resolver.resolve_plots()}


def test_every_stage_runs_its_row_of_the_stage_table(repo):
    """``dvc.yaml``'s ``name`` -> ``python -m flows.stage name`` -> ``STAGES[name]``, a function of
    ``pipeline.stages``, run as a Prefect flow called ``name``: one step apart, one entry point."""
    from flows.stage import STAGES, stage_flow, variant_choices

    seen = set()
    for name, stage in _dvc(repo)["stages"].items():
        base, _, key = name.partition("@")
        words = stage["cmd"].split()
        assert words[:4] == ["python", "-m", "flows.stage", base], f"{name}: {stage['cmd']}"
        assert words[4:] == ([key] if key else []), f"{name}: {stage['cmd']}"
        row = STAGES[base]
        assert callable(getattr(importlib.import_module(row.work_module), row.function)), name
        assert (key in variant_choices(row)) if key else not row.variants, name
        seen.add(base)
    assert seen == set(STAGES), "rows of flows.stage.STAGES without a dvc.yaml stage"
    assert stage_flow("train_quail_mc").name == "train_quail_mc"


def test_the_committed_lock_records_only_stages_of_dvc_yaml(repo):
    """DVC never drops the lock entry of a stage removed or renamed in dvc.yaml: a stale one sits in every
    `git diff dvc.lock` and in the reviewer's way; the committed lock names exactly the stages there are."""
    locked = set(yaml.safe_load((repo / "dvc.lock").read_text(encoding="utf-8"))["stages"])
    stages = set(_dvc(repo)["stages"])
    assert locked <= stages, f"dvc.lock records stages dvc.yaml no longer has: {sorted(locked - stages)}"


def _undeclared(repo: Path, stage: dict, module: str | None = None) -> list[str]:
    declared = [d.rstrip("/") for d in stage["deps"] if d.startswith(("flows/", "pipeline/"))]
    files = project_files(repo, module or stage_module(stage["cmd"]))
    return sorted(str(f) for f in files if not any(str(f) == d or str(f).startswith(d + "/") for d in declared))


def test_headline_outs_come_from_the_registries_and_name_every_headline_file(repo):
    """dvc.yaml's ``metrics/`` outs are generated from each stage module's ``headlines()`` (the rows its code
    writes), and together they are exactly the headline files the committed run wrote: a row a stage writes but
    dvc.yaml does not declare would be a file DVC does not track, and one declared but never written a missing
    output."""
    from pipeline.common.layout import PATHS
    from pipeline.experiments.stage_deps import METRICS_OUT, headline_outs

    declared = set()
    for name, stage in yaml.safe_load((repo / "dvc.yaml").read_text(encoding="utf-8"))["stages"].items():
        body = stage.get("do", stage)
        want = headline_outs(body["cmd"], "foreach" in stage) or []
        have = [next(iter(o)) if isinstance(o, dict) else o for o in body.get("outs", [])]
        assert [o for o in have if o.startswith(METRICS_OUT)] == want, name
        group = stage.get("foreach", "").removeprefix("${paths.").removesuffix("}")
        keys = list(PATHS[group].keys()) if group else [None]
        declared |= {w.replace("${key}", k) if k else w for w in want for k in keys}
    written = {f"{METRICS_OUT}{p.relative_to(repo / PATHS.metrics)}" for p in (repo / PATHS.metrics).rglob("*.json")}
    assert declared == written


def test_a_listed_entry_comes_from_the_module(repo):
    """A stage whose module lists its entry (``entry()``: model_cards, a card per model the stage table's scoring
    stages describe) has exactly those data deps, params and outs in dvc.yaml, written by the generator; each
    card lies in its model's folder, beside ``final/``."""
    from pipeline.experiments.stage_deps import listed_entry
    from pipeline.stages.model_cards import cards

    listed = {}
    for name, stage in yaml.safe_load((repo / "dvc.yaml").read_text(encoding="utf-8"))["stages"].items():
        body = stage.get("do", stage)
        want = listed_entry(body["cmd"])
        if want is not None:
            assert body["outs"] == [{out: {"cache": False, "persist": True}} for out in want["outs"]], name
            assert [d for d in body["deps"] if d.startswith("${")] == want["deps"], name
            assert body["params"] == want["params"], name
            listed[name] = want
    assert list(listed) == ["model_cards"]
    found = cards()
    assert {c.system for c in found} >= {"span_window", "longformer", "boolq_aux", "qa_ir_ora_d", "mc_full"}
    for card in found:
        assert card.card.parent == card.model.parent, card.card


def test_the_committed_run_wrote_every_card(repo):
    from pipeline.stages.model_cards import cards

    for card in cards():
        assert (repo / card.card).is_file(), card.card  # in git: the cards are outs with cache: false


def test_every_stage_declares_exactly_the_files_it_can_run(repo):
    """File-level code deps, in both directions: every file a stage's entry point can execute is declared
    (an edit reruns it) and nothing else is (an edit elsewhere does not). `python -m
    pipeline.experiments.stage_deps` rewrites them."""
    assert update(repo, write=False) == [], "run: python -m pipeline.experiments.stage_deps"
    for name, stage in _dvc(repo)["stages"].items():
        declared = sorted(d for d in stage["deps"] if d.startswith(("flows/", "pipeline/")))
        assert declared == code_deps(repo, stage["cmd"]), name
        assert not _undeclared(repo, stage), name


def test_the_import_walk_sees_imports_inside_functions(tmp_path):
    """The walk above must be able to fail: a module imported only inside a function, relatively or
    absolutely, is found, and so is a package's __init__ and a data file a module names."""
    (tmp_path / "flows").mkdir()
    (tmp_path / "pipeline" / "deep").mkdir(parents=True)
    for init in ("flows/__init__.py", "pipeline/__init__.py", "pipeline/deep/__init__.py"):
        (tmp_path / init).write_text("import logging\n")  # runs something: a dep of every module under it
    (tmp_path / "flows" / "x.py").write_text("def f():\n    from pipeline.deep import hidden\n")
    (tmp_path / "pipeline" / "deep" / "hidden.py").write_text("def g():\n    from . import leaf\n")
    (tmp_path / "pipeline" / "deep" / "leaf.py").write_text("import json\nDATA = 'table.json'\n")
    (tmp_path / "pipeline" / "deep" / "table.json").write_text("{}")
    (tmp_path / "pipeline" / "deep" / "unrelated.json").write_text("{}")
    found = {str(f) for f in project_files(tmp_path, "flows.x")}
    assert found == {"flows/__init__.py", "flows/x.py", "pipeline/__init__.py", "pipeline/deep/__init__.py",
                     "pipeline/deep/hidden.py", "pipeline/deep/leaf.py", "pipeline/deep/table.json"}
    stage = {"cmd": "python -m flows.x", "deps": ["flows/x.py", "flows/__init__.py", "pipeline/__init__.py"]}
    assert _undeclared(tmp_path, stage, "flows.x") == ["pipeline/deep/__init__.py", "pipeline/deep/hidden.py",
                                                       "pipeline/deep/leaf.py", "pipeline/deep/table.json"]
    stage["deps"].append("pipeline/deep")
    assert _undeclared(tmp_path, stage, "flows.x") == []
    # what runs by name: a module in a string (Scrapy settings), a script beside a module (scrapy runspider)
    (tmp_path / "pipeline" / "deep" / "leaf.py").write_text(
        "MIDDLEWARE = 'pipeline.deep.mw.Backoff'\nSPIDER = 'spider.py'\n")
    (tmp_path / "pipeline" / "deep" / "mw.py").write_text("class Backoff: ...\n")
    (tmp_path / "pipeline" / "deep" / "spider.py").write_text("from pipeline.deep import crawled\n")
    (tmp_path / "pipeline" / "deep" / "crawled.py").write_text("")
    found = {str(f) for f in project_files(tmp_path, "flows.x")}
    assert {"pipeline/deep/mw.py", "pipeline/deep/spider.py", "pipeline/deep/crawled.py"} <= found


def test_a_package_init_that_runs_nothing_is_a_dep_only_when_a_module_reads_it(tmp_path):
    """An ``__init__.py`` of a docstring and constants, run only as the parent of the module imported, cannot
    change that module's output and is not a dep (a quarter of dvc.lock's entries were such files, each one
    read, locked and compared on every `dvc repro`); named by a module (``from pipeline import __version__``)
    or given a statement that does something, it is one again."""
    (tmp_path / "pipeline" / "deep").mkdir(parents=True)
    (tmp_path / "pipeline" / "__init__.py").write_text('"""The package."""\n__version__ = "0.1.0"\n')
    (tmp_path / "pipeline" / "deep" / "__init__.py").write_text('"""Deep."""\n')
    (tmp_path / "pipeline" / "deep" / "leaf.py").write_text("X = 1\n")
    (tmp_path / "pipeline" / "m.py").write_text("from pipeline.deep import leaf\n")
    assert {str(f) for f in project_files(tmp_path, "pipeline.m")} == {"pipeline/m.py", "pipeline/deep/leaf.py"}
    (tmp_path / "pipeline" / "m.py").write_text("from pipeline.deep import leaf\nfrom pipeline import __version__\n")
    assert {str(f) for f in project_files(tmp_path, "pipeline.m")} == {
        "pipeline/m.py", "pipeline/deep/leaf.py", "pipeline/__init__.py"}
    (tmp_path / "pipeline" / "deep" / "__init__.py").write_text('"""Deep."""\nimport os\nos.environ["X"] = "1"\n')
    assert "pipeline/deep/__init__.py" in {str(f) for f in project_files(tmp_path, "pipeline.m")}


def test_the_walk_takes_only_file_names_a_module_names_and_refuses_undecodable_modules(tmp_path):
    """A file called "a" or "import" is a substring of every module, not a file it names; a module that is not
    UTF-8 is one clear error naming it."""
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "__init__.py").write_text("")
    (tmp_path / "pipeline" / "m.py").write_text("import json\nTABLE = 'data.json'\nNOTE = 'a metadata.jsonl file'\n")
    for name in ("a", "import", "data.json", "metadata.json", "ata.json"):
        (tmp_path / "pipeline" / name).write_text("{}")
    found = {str(f) for f in project_files(tmp_path, "pipeline.m")}
    assert found == {"pipeline/m.py", "pipeline/data.json"}  # an empty __init__.py runs nothing: not a dep
    (tmp_path / "pipeline" / "m.py").write_bytes(b"X = '\xff\xfe'\n")
    with pytest.raises(ValueError, match=r"m\.py: not UTF-8"):
        project_files(tmp_path, "pipeline.m")
    (tmp_path / "pipeline" / "m.py").write_text("X = " + "(" * 200_000 + ")" * 200_000 + "\n")
    with pytest.raises(ValueError, match=r"m\.py: Python cannot parse it"):
        project_files(tmp_path, "pipeline.m")


@pytest.mark.slow  # copies the checkout and runs dvc status three times
def test_touching_a_module_marks_exactly_the_stages_that_can_run_it(repo, tmp_path):
    """The acceptance test: for every module under pipeline/ and flows/, an edit (in a throw-away copy)
    makes `dvc status` report exactly the stages whose import closure holds it, e.g. a QuAIL heuristic
    marks quail_baselines and nothing that parses Wikipedia."""
    import shutil
    import subprocess

    from dvc.repo import Repo

    copy = tmp_path / "copy"
    tracked = subprocess.run(["git", "ls-files", "flows", "pipeline", "dvc.yaml", "dvc.lock", "params.yaml", "paths.yaml",
                              ".dvc"],
                             cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    for rel in tracked:
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / rel, copy / rel)
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    stages = _dvc(copy)["stages"]
    closure = {name: set(code_deps(copy, st["cmd"])) for name, st in stages.items()}
    modules = sorted(rel for rel in tracked if rel.startswith(("flows/", "pipeline/")))
    assert len(modules) > 60
    dvc_repo = Repo(str(copy))

    def marked(touched: list[str]) -> dict[str, set[str]]:
        """Per touched module, the stages `dvc status` reports it changed for (DVC lists every changed dep of a
        stage, so one status over all the edits says what one status per edit would)."""
        originals = {rel: (copy / rel).read_bytes() for rel in touched}
        try:
            for rel, before in originals.items():
                (copy / rel).write_bytes(before + b"\n# touched\n")
            status = dvc_repo.status()
        finally:
            for rel, before in originals.items():
                (copy / rel).write_bytes(before)
        out: dict[str, set[str]] = {rel: set() for rel in touched}
        for name, changes in status.items():
            for change in changes:
                for rel in change.get("changed deps", {}) if isinstance(change, dict) else ():
                    if rel in out:
                        out[rel].add(name.split(":")[-1])
        return out

    got = marked(modules)  # one status for all the edits: one per module took five minutes
    wrong = {}
    for rel in modules:
        want = {name for name, files in closure.items() if rel in files}
        if got[rel] != want:
            wrong[rel] = (sorted(got[rel]), sorted(want))
    assert not wrong, wrong
    # and an edit alone marks the same stages as among all the others
    for rel in ("pipeline/quail/heuristics.py", "pipeline/common/layout.py"):
        assert marked([rel])[rel] == got[rel], rel
    heuristics = {name for name, files in closure.items() if "pipeline/quail/heuristics.py" in files}
    assert heuristics == {"quail_baselines"}, heuristics


def test_foreach_items_are_the_variants_the_flow_accepts(repo):
    """A ``foreach`` stage runs one stage per entry of its paths.yaml group; those keys and the flow's argparse
    choices must agree, or a stage fails only when it runs."""
    from pipeline.common.layout import PATHS
    from pipeline.quail.mc_model import VARIANTS
    from pipeline.strategyqa.answering import SETTINGS

    raw = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]
    stages = _dvc(repo)["stages"]
    for step in ("train", "predict", "evaluate"):
        assert raw[f"{step}_strategyqa_qa"]["foreach"] == "${paths.strategyqa_qa}"
        assert raw[f"{step}_quail_mc"]["foreach"] == "${paths.quail_mc}"
        assert {n for n in stages if n.startswith(f"{step}_quail_mc@")} == {f"{step}_quail_mc@{v}" for v in VARIANTS}
        assert {n for n in stages if n.startswith(f"{step}_strategyqa_qa@")} == {
            f"{step}_strategyqa_qa@{s}" for s in SETTINGS}
    assert tuple(PATHS.strategyqa_qa.keys()) == SETTINGS
    assert tuple(PATHS.quail_mc.keys()) == VARIANTS


def test_stage_params_exist_in_the_model(repo):
    fields = Params.model_fields
    for name, stage in _dvc(repo)["stages"].items():
        for key in stage.get("params", []):
            key = next(iter(key)) if isinstance(key, dict) else key
            section, *rest = key.split(".")
            assert section in fields, f"{name} reads unknown params section {section!r}"
            model = fields[section].annotation
            if rest:
                assert rest[0] in model.model_fields, f"{name} reads unknown params key {key!r}"


def test_metrics_are_the_headline_files_and_plots_live_under_plots(repo):
    """`dvc metrics show` reads the folder metrics/, which holds exactly the headline files the stages
    declare (metrics/<track>/<system>.json); breakdowns are reports/, never metrics."""
    from pipeline.common.headline import TRACKS

    dvc = _dvc(repo)
    assert dvc["metrics"] == ["metrics"]
    declared = set()
    for stage in dvc["stages"].values():
        for o in stage.get("outs", []):
            concrete = next(iter(o)) if isinstance(o, dict) else o
            if concrete.startswith("metrics/"):
                track, name = concrete.split("/")[1:]
                assert track in TRACKS and name.endswith(".json"), concrete
                declared.add(concrete)
    assert len(declared) >= 20
    on_disk = {p.relative_to(repo).as_posix() for p in (repo / "metrics").rglob("*.json")}
    assert on_disk == declared, (on_disk ^ declared)
    for p in dvc.get("plots", []):
        key, spec = next(iter(p.items())) if isinstance(p, dict) else (p, {})
        files = [key] if key.startswith("plots/") else [f for axis in ("x", "y") if isinstance(spec.get(axis), dict)
                                                        for f in spec[axis]]
        # plot data under plots/, learning curves in the DVCLive folders (dvclive/<model>/plots/metrics/...)
        assert files and all(f.startswith(("plots/", "dvclive/")) for f in files), key
        for f in files:
            if f.startswith("dvclive/"):
                assert f.split("/")[2:4] == ["plots", "metrics"] and spec.get("x") == "step", f
        assert spec.get("x_label") and spec.get("y_label"), f"{key}: label both axes"


def test_dvc_analytics_off(repo):
    assert "analytics = false" in (repo / ".dvc" / "config").read_text()


def test_no_cached_dvc_output_is_committed_to_git(repo):
    """Cached outs belong to DVC; a copy in git makes `dvc repro` refuse to write them ("tracked by SCM")."""
    import subprocess

    tracked = set(subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout.split())
    for name, stage in _dvc(repo)["stages"].items():
        for out in stage.get("outs", []):
            path, opts = (next(iter(out.items())) if isinstance(out, dict) else (out, {}))
            if (opts or {}).get("cache", True):
                assert not any(t == path or t.startswith(path.rstrip("/") + "/") and not t.endswith(".gitignore")
                               for t in tracked), f"{name}: {path} is committed to git"


def _outs(stage: dict) -> list:
    return stage.get("outs", [])


def test_uncached_outputs_persist_while_their_stage_runs(repo):
    """DVC deletes a stage's outputs before running it; metrics, plots and reports are not in DVC's cache,
    so a stage that then fails (an invalid params.yaml, say) would lose them for good. ``persist: true``
    keeps them in place; every stage writes its outputs whole and renames them, so nothing stale survives
    a stage that succeeds."""
    stages = _dvc(repo)["stages"]
    missing = [(name, next(iter(o))) for name, st in stages.items() for o in _outs(st)
               if isinstance(o, dict) and next(iter(o.values())).get("cache") is False
               and not next(iter(o.values())).get("persist")]
    assert not missing


def test_every_training_stages_seed_runs_persist_so_an_unfinished_seed_resumes(repo):
    """DVC deletes a stage's outputs before running it. A seed after the first trains under ``seeds/<seed>``,
    its checkpoints inside that output: without ``persist: true`` a stage killed mid-run would lose them and
    retrain those seeds from step 0 (the first seed's checkpoints sit beside its ``final/``, outside DVC's outs)."""
    stages = _dvc(repo)["stages"]
    seeded = {name: [o for o in _outs(st) if (o if isinstance(o, str) else next(iter(o))).endswith("/seeds")]
              for name, st in stages.items()}
    seeded = {name: outs for name, outs in seeded.items() if outs}
    # span, Longformer, BoolQ, seven StrategyQA settings, four QuAIL variants
    assert len(seeded) >= 13 and all(name.startswith("train_") for name in seeded)
    for name, outs in seeded.items():
        assert len(outs) == 1 and isinstance(outs[0], dict) and next(iter(outs[0].values())) == {"persist": True}, name


def test_what_dvc_removes_before_a_training_stage_reruns_leaves_every_seeds_checkpoints(repo, tmp_path):
    """The step ``dvc repro`` takes before it runs a changed stage (``Stage.remove_outs``, under the repository
    lock), on this dvc.yaml in a clone, after a kill: the first seed's ``final/`` goes, every seed's checkpoints
    stay (seeds/ persists, the first seed's sit outside the outputs), so the rerun resumes them."""
    import subprocess
    import sys

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    model = clone / "models/quail_mc_options"
    for kept in (model / "checkpoint-100", model / "seeds/43/checkpoint-100", model / "seeds/44/final"):
        kept.mkdir(parents=True)
        (kept / "progress.json").write_text("{}")
    (model / "final").mkdir()
    (model / "final/config.json").write_text("{}")
    remove = ("from dvc.repo import Repo\n"
              "with Repo('.') as repo, repo.lock:\n"
              "    stage = next(s for s in repo.index.stages if s.name == 'train_quail_mc@options')\n"
              "    stage.remove_outs(ignore_remove=False, force=False)\n")
    subprocess.run([sys.executable, "-c", remove], cwd=clone, check=True, capture_output=True, timeout=300)
    assert not (model / "final").exists()
    assert (model / "checkpoint-100/progress.json").is_file()
    assert (model / "seeds/43/checkpoint-100/progress.json").is_file()


def test_invalid_params_under_plain_dvc_repro_delete_nothing(repo, tmp_path):
    import os
    import re
    import shutil
    import subprocess

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    before = (clone / "reports/sample.json").read_bytes()
    params = clone / "params.yaml"
    params.write_text(re.sub(r"n_articles: \d+", "n_articles: oops", params.read_text(), count=1))
    venv = repo / ".venv" / "bin"
    env = dict(os.environ, PATH=f"{venv}{os.pathsep}{os.environ['PATH']}")
    res = subprocess.run([str(venv / "dvc"), "repro", "sample"], cwd=clone, env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode != 0 and "sample.n_articles" in res.stdout + res.stderr
    assert (clone / "reports/sample.json").read_bytes() == before
    shutil.rmtree(clone)


def test_the_walk_skips_type_checking_imports_and_the_boundary(tmp_path):
    """What never runs (``if TYPE_CHECKING:``) and the named boundary (the Prefect wrapper, params validation,
    logging) are not code deps; everything else a module imports is."""
    for pkg in ("flows", "pipeline", "pipeline/common", "pipeline/stages"):
        (tmp_path / pkg).mkdir(exist_ok=True)
        (tmp_path / pkg / "__init__.py").write_text('"""x"""\n')
    (tmp_path / "pipeline" / "stages" / "s.py").write_text(
        "from typing import TYPE_CHECKING\nfrom pipeline.common import logs, files\n"
        "if TYPE_CHECKING:\n    from pipeline.common import typed\n"
        "def run():\n    from pipeline.params import load_params\n    from flows import _common\n")
    for name in ("logs", "files", "typed"):
        (tmp_path / "pipeline" / "common" / f"{name}.py").write_text("")
    (tmp_path / "pipeline" / "params.py").write_text("")
    found = {str(f) for f in project_files(tmp_path, "pipeline.stages.s")}
    assert found == {"pipeline/stages/s.py", "pipeline/common/files.py"}  # the docstring-only __init__s: no deps


def _stage_closures(repo: Path) -> dict[str, list[Path]]:
    return {name: sorted(project_files(repo, stage_module(st["cmd"]))) for name, st in _dvc(repo)["stages"].items()}


def test_the_boundary_is_only_reached_where_it_cannot_change_bytes(repo):
    """No stage's work imports the Prefect wrapper; it reaches params only under TYPE_CHECKING or to validate
    (``validate_params``/``load_params``/``project_section``, which return the file's values unchanged); and the
    logging module and the trust marks open no file."""
    import ast

    validators = {"load_params", "validate_params", "project_section", "ParamsError", "format_validation_error"}
    for name, files in _stage_closures(repo).items():
        for rel in files:
            if rel.suffix != ".py":
                continue
            tree = ast.parse((repo / rel).read_text(encoding="utf-8"))
            typed = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                     and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING"
                     for child in node.body for n in ast.walk(child)}
            for node in ast.walk(tree):
                if id(node) in typed or not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                targets = ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
                assert not any(t == "flows" or t.startswith("flows.") for t in targets), f"{name}: {rel} imports flows"
                if isinstance(node, ast.ImportFrom) and node.module == "pipeline.params":
                    assert {a.name for a in node.names} <= validators, f"{name}: {rel} uses the schema at run time"
    writes = {"open", "write_text", "write_bytes", "replace", "rename", "mkdir", "dump", "unlink", "fdopen"}
    for rel in ("pipeline/common/logs.py", "pipeline/common/trust.py"):
        tree = ast.parse((repo / rel).read_text(encoding="utf-8"))
        called = {getattr(n.func, "id", getattr(n.func, "attr", None)) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        assert not called & writes, (rel, called & writes)


def test_the_trust_marks_change_no_value():
    """Why pipeline.common.trust may stay outside the code deps: a field marked ``Science[int]`` validates and
    dumps exactly as the bare ``int``, and the mark is metadata only ``params_trust`` reads."""
    from pydantic import Field, create_model

    from pipeline.common.trust import Infrastructure, Science, Trust, trust_of

    marked = create_model("Marked", k=(Science[int], Field(ge=1)), url=(Infrastructure[str], ...))
    bare = create_model("Bare", k=(int, Field(ge=1)), url=(str, ...))
    for raw in ({"k": 3, "url": "x"}, {"k": "3", "url": "x"}, {"k": 3.0, "url": "y"}):
        assert marked(**raw).model_dump(mode="json") == bare(**raw).model_dump(mode="json")
    assert trust_of(marked.model_fields["k"]) is Trust.SCIENCE and trust_of(bare.model_fields["k"]) is None


def test_validation_changes_no_value(repo):
    """Why params validation may stay outside the code deps: what a stage receives is what the file says
    (DVC tracks those values; a date is read as the date it names), for the whole file and for each stage's
    declared sections."""
    from flows.stage import STAGES, declared_sections
    from pipeline.params import load_params

    raw = yaml.safe_load((PROJECT_PARAMS).read_text(encoding="utf-8"))
    assert load_params(PROJECT_PARAMS).model_dump(mode="json") == raw
    for name in STAGES:
        sections = declared_sections(name, repo / "dvc.yaml")
        got = load_params(PROJECT_PARAMS, sections=sections).model_dump(mode="json")
        assert got == {s: raw[s] for s in sections}, name


def test_every_stage_stands_on_few_shared_files(repo):
    """The ground every stage stands on is small: an edit to a shared file reruns everything, so there are
    few (the package markers, the paths registry, whole-file writes)."""
    closures = _stage_closures(repo)
    shared = set.intersection(*(set(files) for files in closures.values()))
    assert len(shared) <= 8, sorted(map(str, shared))


def eval_only_files(repo: Path) -> set[str]:
    """What only reports, as DVC resolves the paths: NLQuAD's test split (and the split folder, which holds it),
    StrategyQA's eval questions and the predicted decompositions made for them, QuAIL's challenge set."""
    params = yaml.safe_load(PROJECT_PARAMS.read_text())
    split = yaml.safe_load((repo / "paths.yaml").read_text())["paths"]["split"]
    return {split["dir"], f"{split['dir']}/test.json", params["benchmark_sources"]["strategyqa_eval"],
            params["benchmark_sources"]["quail_challenge"], params["strategyqa_qa"]["predicted_decompositions"]}


def training_eval_deps(stages: dict, eval_only: set[str]) -> dict[str, set[str]]:
    """Each training stage's deps that are eval files."""
    out = {}
    for name, stage in stages.items():
        if name.startswith("train_"):
            deps = {next(iter(d)) if isinstance(d, dict) else d for d in stage.get("do", stage).get("deps", [])}
            if deps & eval_only:
                out[name] = deps & eval_only
    return out


def test_no_training_stage_reads_an_eval_split(repo):
    """Budgets and checkpoints are chosen on selection-dev: no train_ stage may declare an eval split as a dep,
    so a held-out figure cannot steer training. (This checks the files DVC is told about: QuAIL's held-out dev
    texts share one file with its training texts, and StrategyQA's eval questions reach the trainers through the
    benchmark manifest and contexts.json, both split inside the stage; files per split are not built yet.)"""
    stages = _dvc(repo)["stages"]
    eval_only = eval_only_files(repo)
    assert {name.split("@")[0] for name in stages if name.startswith("train_")} >= {
        "train_span", "train_longformer", "train_quail_mc", "train_strategyqa_qa", "train_boolq_aux"}
    assert training_eval_deps(stages, eval_only) == {}
    # the check sees a resolved dep: the split folder (which holds test.json) given to a trainer is caught
    leaky = {"train_span": {"deps": [*stages["train_span"]["deps"], "data/splits"]}}
    assert training_eval_deps(leaky, eval_only) == {"train_span": {"data/splits"}}

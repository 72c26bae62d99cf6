"""Every artifact path is written once (paths.yaml), read by dvc.yaml and by the stages; every stage reads only
the paths and params its dvc.yaml entries declare."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.common.layout import PATHS, LayoutError, load_layout
from pipeline.experiments.static_reads import outermost_chains, param_reads, path_reads
from tests.params_files import PROJECT_PARAMS

ARTIFACT_ROOTS = ("data", "reports", "plots", "metrics", "models", "dvclive")
_ARTIFACT = re.compile(rf"^(?:{'|'.join(ARTIFACT_ROOTS)})/")
# entries no stage declares: scratch a stage keeps between runs, not an output
SCRATCH = {"paths.crawl.state", "paths.strategyqa_cv.work_dir"}  # resumable work, gone when the stage ends
# modules that may read paths.yaml: the stages, and the two writers/readers of stage outputs they all call
LAYOUT_READERS = ("pipeline/stages/", "pipeline/common/headline.py", "pipeline/common/manifest.py",
                  "pipeline/experiments/", "pipeline/offline/", "flows/")


def _dvc(repo: Path) -> dict:
    from dvc.dvcfile import load_file
    from dvc.repo import Repo

    resolver = load_file(Repo(str(repo)), "dvc.yaml").resolver
    return {"stages": resolver.resolve()["stages"], "metrics": resolver.resolve_metrics(),
            "plots": resolver.resolve_plots()}


def _code_files(repo: Path) -> list[Path]:
    return sorted(p for top in ("pipeline", "flows") for p in (repo / top).rglob("*.py"))


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_no_artifact_path_is_written_in_code(repo):
    """A path under data/, reports/, plots/, metrics/, models/ or dvclive/ in code (docstrings aside) is a
    second copy of a paths.yaml entry that a rename would miss."""
    found = []
    for path in _code_files(repo):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if _ARTIFACT.match(node.value):
                    found.append(f"{path.relative_to(repo)}:{node.lineno}: {node.value!r}")
    assert not found, "write these in paths.yaml and read them through PATHS:\n" + "\n".join(found)


def test_dvc_yaml_names_every_artifact_through_paths_yaml(repo):
    literal = [f"dvc.yaml:{i}: {line.strip()}" for i, line in enumerate((repo / "dvc.yaml").read_text().splitlines(), 1)
               if re.match(rf"^\s*(?:- )?(?:{'|'.join(ARTIFACT_ROOTS)})/|^\s*- (?:{'|'.join(ARTIFACT_ROOTS)})\s*$", line)]
    assert not literal, "use ${paths....}:\n" + "\n".join(literal)


def test_every_entry_is_a_declared_dep_or_out(repo):
    """An entry no stage declares is a file DVC does not know about (a stale output nobody reruns), unless it
    is scratch or the folder a declared output lies in (a model's checkpoints around ``final/``)."""
    dvc = _dvc(repo)
    declared = set()
    for stage in dvc["stages"].values():
        for entry in stage.get("deps", []) + stage.get("outs", []):
            declared.add(Path(next(iter(entry)) if isinstance(entry, dict) else entry))
    declared |= {Path(m) for m in dvc["metrics"]}
    unused = []
    for name, value in load_layout().leaves().items():
        if name in SCRATCH:
            continue
        if value not in declared and not any(value in d.parents for d in declared):
            unused.append(f"{name}: {value}")
    assert not unused, unused


def test_entries_inside_a_folder_agree_with_the_code_that_names_them(repo):
    """Where paths.yaml names a file inside a folder another entry names (the sample's WARC, the splits
    training reads, a model's final/), the names in between are the code's own: checked here, so a rename of
    one without the other fails now rather than at ``dvc repro``. The params that default to the sample's
    files (the inputs a user swaps for real data) must name the same files."""
    from pipeline.params import load_params
    from pipeline.sample.build import DUMP_NAME, STRATEGYQA_NAME, WARC_NAME
    from pipeline.training.finetune import FINAL_DIR

    sample = PATHS.sample
    assert sample.warc == sample.dir / WARC_NAME
    assert PATHS.split.train == PATHS.split.dir / "train.json" and PATHS.split.dev == PATHS.split.dir / "dev.json"
    groups = [PATHS.train_span, PATHS.train_longformer, PATHS.boolq_aux,
              *(PATHS.strategyqa_qa[k] for k in PATHS.strategyqa_qa.keys()),
              *(PATHS.quail_mc[k] for k in PATHS.quail_mc.keys())]
    for group in groups:
        assert group.model == group.model_dir / FINAL_DIR
    params = load_params(PROJECT_PARAMS)
    assert [Path(w) for w in params.archive.local_warcs] == [sample.warc], "archive.local_warcs"
    assert Path(params.wiki.dump) == sample.dir / DUMP_NAME, "wiki.dump"
    assert Path(params.retrieve.questions) == sample.dir / STRATEGYQA_NAME, "retrieve.questions"


def test_a_missing_entry_names_itself():
    try:
        PATHS.split.reprot
    except LayoutError as exc:
        assert "paths.split.reprot" in str(exc) and "report" in str(exc)
    else:
        raise AssertionError("no error for a missing entry")


def test_only_stages_read_the_layout(repo):
    """Library code takes paths as arguments (it runs on any files); only stage-side modules read paths.yaml."""
    readers = [str(p.relative_to(repo)) for p in _code_files(repo)
               if "pipeline.common.layout" in p.read_text(encoding="utf-8")]
    stray = [r for r in readers if not r.startswith(LAYOUT_READERS) and r != "pipeline/common/layout.py"]
    assert not stray, stray


# --- what each stage module reads, statically ---------------------------------------------------------------

def _stage_modules(repo: Path) -> dict[str, list[str]]:
    """stage module -> the dvc.yaml stages it does the work of (``train_span`` runs ``pipeline.stages.train_span_qa``)."""
    from flows.stage import STAGES

    out: dict[str, list[str]] = {}
    for name, stage in _dvc(repo)["stages"].items():
        body = stage.get("do", stage)
        work = STAGES[body["cmd"].split()[3]]
        out.setdefault(f"pipeline/stages/{work.module}.py", []).append(name)
    return out


def _declared_paths(stage: dict) -> set[Path]:
    return {Path(next(iter(e)) if isinstance(e, dict) else e) for e in stage.get("deps", []) + stage.get("outs", [])}


def test_each_stage_module_reads_only_paths_its_stages_declare(repo):
    """A path a stage opens without declaring it is an input DVC does not watch (or an output it does not
    keep): every ``PATHS...`` a stage module reads must be a dep or out of a stage that module serves (or the
    folder one lies in)."""
    stages = _dvc(repo)["stages"]
    leaves = {tuple(k.split(".")[1:]): v for k, v in load_layout().leaves().items()}
    wrong = []
    for module, served in _stage_modules(repo).items():
        declared = set().union(*(_declared_paths(stages[s]) for s in served))
        for read, matches in path_reads(repo / module, leaves).items():
            assert matches, f"{module}: PATHS.{read} is not in paths.yaml"
            for key in matches:
                value = leaves[key]
                if "paths." + ".".join(key) in SCRATCH:
                    continue
                if value not in declared and not any(value in d.parents for d in declared):
                    wrong.append(f"{module} ({', '.join(served)}): paths.{'.'.join(key)} = {value}")
    assert not wrong, "\n".join(wrong)


def _declared_params(stage: dict) -> set[str]:
    out = set()
    for entry in stage.get("params", []):
        if isinstance(entry, dict):
            (file, keys), = entry.items()
            out.update(keys)
        else:
            out.add(entry)
    return out


def test_each_stage_module_reads_only_params_its_stages_declare(repo):
    """A params key a stage reads without declaring it is an edit `dvc repro` does not rerun for. Read
    statically from the stage module and from the training launcher it hands ``params`` to: a key read
    (``params.search.k1``) must be declared, or its section; a whole section handed to library code must be
    declared at least in part (which keys the library reads is not visible here)."""
    stages = _dvc(repo)["stages"]
    launcher = repo / "pipeline/launcher/torchrun.py"
    wrong = []
    for module, served in _stage_modules(repo).items():
        text = (repo / module).read_text()
        reads = param_reads(repo / module) | (param_reads(launcher) if "launch(" in text else set())
        declared = set().union(*(_declared_params(stages[s]) for s in served))
        for read in sorted(reads):
            section = read.split(".")[0]
            whole_section_in_part = read == section and any(d.startswith(section + ".") for d in declared)
            if read not in declared and section not in declared and not whole_section_in_part:
                wrong.append(f"{module} ({', '.join(served)}) reads params.{read}; declared: {sorted(declared)}")
    assert not wrong, "\n".join(wrong)


def test_the_static_reads_see_variant_and_nested_access(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(params, k):\n    x = PATHS.quail_mc[k].predictions\n    y = PATHS[f'train_{k}'].report\n"
                   "    p = params.retrieve\n    return params.search.k1, params.quail, PATHS.split.dir / 'a.json', p.k\n")
    tree = ast.parse(src.read_text())
    assert outermost_chains(tree, "PATHS") == {("quail_mc", "*", "predictions"), ("train_*", "report"),
                                                 ("split", "dir")}
    assert param_reads(src) == {"search.k1", "quail", "retrieve", "retrieve.k"}


def test_moving_an_output_is_one_edit(repo, tmp_path):
    """In a throw-away copy, one edit to paths.yaml moves the params stamp: DVC's stage definitions (its out,
    and every stage's dep on it) and the stage's own code follow, and the file is written at the new place."""
    copy = tmp_path / "copy"
    tracked = subprocess.run(["git", "ls-files", "flows", "pipeline", "dvc.yaml", "params.yaml", "paths.yaml", ".dvc"],
                             cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    for rel in tracked:
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / rel, copy / rel)
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    layout = copy / "paths.yaml"
    text = layout.read_text()
    assert text.count("stamp: reports/params_check.json") == 1
    layout.write_text(text.replace("stamp: reports/params_check.json", "stamp: reports/checked/params.json"))

    # resolved in its own process: DVC caches a vars file by its relative name within one process
    res = subprocess.run([sys.executable, "-c", "import json\nfrom dvc.dvcfile import load_file\n"
                          "from dvc.repo import Repo\n"
                          "print(json.dumps(load_file(Repo('.'), 'dvc.yaml').resolver.resolve()['stages']))"],
                         cwd=copy, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    stages = json.loads(res.stdout)
    assert [next(iter(o)) for o in stages["check_params"]["outs"]] == ["reports/checked/params.json"]
    assert all("reports/checked/params.json" in st["deps"] for n, st in stages.items() if n != "check_params")
    assert not any("reports/params_check.json" in yaml.safe_dump(st) for st in stages.values())
    res = subprocess.run([sys.executable, "-c", "from pipeline.params import load_params\n"
                          "from pipeline.stages import check_params\ncheck_params.run(load_params())"],
                         cwd=copy, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (copy / "reports/checked/params.json").is_file()
    assert not (copy / "reports/params_check.json").exists()


# modules that run stages or tools and so read params.yaml: the stages, their flows, the experiment tools, and
# the training launcher (a torchrun rank, or a seed's process, calls the stage's train() with the params in its
# launch spec)
PARAMS_READERS = ("pipeline/stages/", "flows/", "pipeline/experiments/", "pipeline/offline/", "pipeline/params.py",
                  "pipeline/params_trust.py", "pipeline/launcher/torchrun.py", "pipeline/launcher/join.py",
                  "pipeline/launcher/parallel_seeds.py", "pipeline/launcher/seed_process.py")


def test_library_code_takes_values_not_the_params_file(repo):
    """Library functions take plain values (or the section they are configured by, defined in their own
    package's ``config`` module); only stages (and tools, and a module's own command line, ``main``) import the
    schema, read params.yaml or the whole ``Params``, so library code runs on any settings and the file is read
    in one kind of place."""
    wrong = []
    for path in _code_files(repo):
        rel = str(path.relative_to(repo))
        if rel.startswith(PARAMS_READERS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mains = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "main"
                 for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "pipeline.params" and id(node) not in mains:
                wrong.append(f"{rel}:{node.lineno} imports {', '.join(a.name for a in node.names)} from the schema")
            elif isinstance(node, ast.Import) and any(a.name == "pipeline.params" for a in node.names):
                wrong.append(f"{rel}:{node.lineno} imports the schema")
    assert not wrong, "\n".join(wrong)


def test_the_schema_imports_only_section_models(repo):
    """Every stage validates the whole params.yaml, so every module the schema imports is a code dep of every
    stage: it may import the sections' ``config`` modules (types, limits and trust markers only) and nothing
    that does work, or an edit to a sample template would rerun the whole pipeline."""
    code = ("import sys, pipeline.params\n"
            "print('\\n'.join(sorted(m for m in sys.modules if m == 'pipeline' or m.startswith('pipeline.'))))")
    res = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    loaded = set(res.stdout.split())
    allowed = {"pipeline", "pipeline.params", "pipeline.common", "pipeline.common.strict_model",
               "pipeline.common.trust"}  # the science/infrastructure markers on the fields
    extra = sorted(m for m in loaded - allowed
                   if not (m.endswith(".config") or f"{m}.config" in loaded))  # a config module's package
    assert not extra, f"pipeline.params imports modules that are not section models: {extra}"
    assert {m for m in loaded if m.endswith(".config")} >= {"pipeline.sample.config", "pipeline.training.config"}


@pytest.mark.parametrize("value", ["../outside/report.json", "/tmp/report.json", "~/report.json", "a/../../b", ""])
def test_an_entry_outside_the_checkout_is_refused(value):
    from pipeline.common.layout import Layout, LayoutError

    layout = Layout({"stage": {"report": value}})
    with pytest.raises(LayoutError, match="paths.stage.report"):
        layout.stage.report
    with pytest.raises(LayoutError, match="paths.stage.report"):
        layout.leaves()


def test_every_training_stage_declares_every_budget_key_it_trains_with(repo):
    """``TrainConfig.from_params`` hands the loop every ``TrainBudget`` field of a section, which the static
    reads above cannot see: each training stage declares them all (or the whole section), so a change of
    precision or attention dropout retrains."""
    from pipeline.training.config import TrainBudget

    stages = _dvc(repo)["stages"]
    sections = {"train_span": "span_window", "train_longformer": "longformer", "train_boolq_aux": "boolq_aux",
                "train_strategyqa_qa": "strategyqa_qa", "train_quail_mc": "quail_mc", "strategyqa_cv": "strategyqa_qa"}
    missing = []
    for stage, section in sections.items():
        resolved = [name for name in stages if name == stage or name.startswith(stage + "@")]  # foreach
        assert resolved, stage
        declared = set.intersection(*(_declared_params(stages[name]) for name in resolved))
        missing += [f"{stage}: {section}.{k}" for k in TrainBudget.model_fields
                    if section not in declared and f"{section}.{k}" not in declared]
    assert not missing, missing

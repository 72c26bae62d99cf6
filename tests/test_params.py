from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.params import Params, ParamsError, load_params, project_section
from tests.params_files import PROJECT_PARAMS, write_params


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "params.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _with(tmp_path: Path, overrides: str) -> Path:
    """The project's params with the sections of ``overrides`` (YAML) merged in."""
    return Path(write_params(tmp_path / "params.yaml", yaml.safe_load(overrides)))


def test_a_missing_key_is_named_and_nothing_is_filled_in(repo, tmp_path):
    """params.yaml is the one place values live: a key left out is an error, not a silent default."""
    raw = yaml.safe_load((PROJECT_PARAMS).read_text())
    del raw["span_window"]["doc_stride"]
    del raw["schedule"]
    with pytest.raises(ParamsError) as err:
        load_params(_write(tmp_path, yaml.safe_dump(raw)))
    msg = str(err.value)
    assert "span_window.doc_stride: missing" in msg and "schedule: missing" in msg
    assert "got {" not in msg  # the section's other values are not dumped into the message

def test_repository_params_are_valid(repo):
    params = load_params(PROJECT_PARAMS)
    assert isinstance(params, Params)
    assert params.sample.n_articles >= 10


def test_misspelt_key_names_the_path_and_the_allowed_keys(repo, tmp_path):
    text = (PROJECT_PARAMS).read_text().replace("n_articles:", "n_artcles:")
    with pytest.raises(ParamsError) as err:
        load_params(_write(tmp_path, text))
    msg = str(err.value)
    assert "sample.n_artcles" in msg
    assert "n_articles" in msg and "did you mean 'sample.n_articles'" in msg


def test_wrong_type_names_the_path(repo, tmp_path):
    raw = yaml.safe_load((PROJECT_PARAMS).read_text())
    raw["sample"]["seed"] = "thirteen"
    with pytest.raises(ParamsError, match=r"sample\.seed"):
        load_params(_write(tmp_path, yaml.safe_dump(raw)))


def test_unknown_section_and_bad_cron(tmp_path):
    with pytest.raises(ParamsError) as err:
        load_params(_with(tmp_path, "sampel: {}\nschedule: {cron: '61 * * * *'}\n"))
    msg = str(err.value)
    assert "sampel: unknown key" in msg and "did you mean 'sample'" in msg
    assert "schedule.cron" in msg


def test_range_checks(tmp_path):
    with pytest.raises(ParamsError, match="start .* must be before end"):
        load_params(_with(tmp_path, "sample: {start: '2020-01-01', end: '2019-01-01'}\n"))
    with pytest.raises(ParamsError, match=r"sample\.question_heading_share"):
        load_params(_with(tmp_path, "sample: {question_heading_share: 1.5}\n"))


def test_track_sections_check_their_values(tmp_path):
    with pytest.raises(ParamsError, match="retrieve: .*predicted needs a predictions file"):
        load_params(_with(tmp_path, "retrieve: {decompositions: predicted}\n"))
    with pytest.raises(ParamsError, match=r"strategyqa_qa\.decompositions: unknown key"):  # IR-D and IR-ORA-D both run
        load_params(_with(tmp_path, "strategyqa_qa: {decompositions: gold}\n"))
    with pytest.raises(ParamsError, match=r"difficulty\.models: .*unknown systems \['bert'\]"):
        load_params(_with(tmp_path, "difficulty: {models: [pmi, bert]}\n"))
    with pytest.raises(ParamsError, match=r"quail\.train_share"):
        load_params(_with(tmp_path, "quail: {train_share: 1.0}\n"))
    with pytest.raises(ParamsError, match=r"quail_mc\.max_steps"):
        load_params(_with(tmp_path, "quail_mc: {max_steps: 0}\n"))


def test_not_yaml_and_missing_file(tmp_path):
    with pytest.raises(ParamsError, match="not valid YAML"):
        load_params(_write(tmp_path, "sample: [unclosed\n"))
    with pytest.raises(ParamsError, match="file not found"):
        load_params(tmp_path / "nope.yaml")


def test_check_cli_exit_codes(repo, tmp_path):
    ok = subprocess.run([sys.executable, "-m", "pipeline.params", "--check", str(PROJECT_PARAMS)],
                        cwd=repo, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    bad = _write(tmp_path, (PROJECT_PARAMS).read_text().replace("seed: 13", "seeed: 13"))
    res = subprocess.run([sys.executable, "-m", "pipeline.params", "--check", str(bad)],
                         cwd=repo, capture_output=True, text=True)
    assert res.returncode != 0
    assert "sample.seeed" in res.stderr


def test_stage_with_bad_params_writes_nothing(repo, tmp_path):
    """The stage CLI validates before the flow starts: exit 2, no output folder, no metrics file."""
    bad = _write(tmp_path, (PROJECT_PARAMS).read_text().replace("sample:\n  seed: 13\n",
                                                                       "sample:\n  seed: 13\n  typo_key: 1\n"))
    res = subprocess.run([sys.executable, "-m", "flows.stage", "sample", "--params", str(bad)], cwd=tmp_path,
                         capture_output=True, text=True, env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 2, res.stderr
    assert "sample.typo_key" in res.stderr
    assert not (tmp_path / "data").exists()  # the sample folder would be data/sample (paths.yaml)
    assert not (tmp_path / "reports").exists()
    assert "dvc checkout" not in res.stderr  # not run by DVC: nothing was removed


def test_a_stage_dvc_runs_says_how_to_get_back_the_outputs_dvc_removed(repo, tmp_path):
    """DVC removes a stage's outputs before running its command, so a stage that refuses its params has lost
    them; the message says how to put them back from the cache where they are there, and to build on where not."""
    bad = _write(tmp_path, (PROJECT_PARAMS).read_text().replace("split:\n  seed: 2021\n",
                                                                "split:\n  seed: 2021\n  typo_key: 1\n"))
    env = {"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin", "DVC_STAGE": "split"}
    res = subprocess.run([sys.executable, "-m", "flows.stage", "split", "--params", str(bad)], cwd=tmp_path,
                         capture_output=True, text=True, env=env)
    assert res.returncode == 2 and "split.typo_key" in res.stderr
    # a first build stopped here: nothing in the cache, so checkout would fail ("Is your cache up to date?")
    assert "split had not finished a build here" in res.stderr and "`dvc repro split` builds them" in res.stderr
    assert "dvc checkout" not in res.stderr
    # dvc.lock records the outputs and the cache holds them (a folder's .dir object), or git keeps them
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages:\n  split:\n    outs:\n    - path: data/splits\n"
                                       "      md5: f776a50ab2cecf545127ce8514ecc5e0.dir\n")
    obj = tmp_path / ".dvc" / "cache" / "files" / "md5" / "f7" / "76a50ab2cecf545127ce8514ecc5e0.dir"
    obj.parent.mkdir(parents=True)
    obj.write_text("[]")
    res = subprocess.run([sys.executable, "-m", "flows.stage", "split", "--params", str(bad)], cwd=tmp_path,
                         capture_output=True, text=True, env=env)
    assert "DVC removed split's outputs" in res.stderr and "`dvc checkout split`" in res.stderr
    obj.unlink()
    res = subprocess.run([sys.executable, "-m", "flows.stage", "split", "--params", str(bad)], cwd=tmp_path,
                         capture_output=True, text=True, env=env)
    assert "dvc checkout" not in res.stderr and "`dvc repro split`" in res.stderr
    if not Path("/usr/bin/python3").exists():
        return
    bare = subprocess.run(["/usr/bin/python3", "-m", "flows.stage", "split"], cwd=repo, capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "DVC_STAGE": "split"})
    assert bare.returncode != 0 and "has no Prefect" in bare.stderr and "`dvc repro split`" in bare.stderr


def test_a_repeated_key_is_an_error_not_last_one_wins(repo, tmp_path):
    text = (PROJECT_PARAMS).read_text().replace("split:\n  seed: 2021\n", "split:\n  seed: 2021\n  seed: 7\n")
    assert "seed: 7" in text
    with pytest.raises(ParamsError, match=r"duplicate key 'seed' \(line \d+; first on line \d+\)"):
        load_params(_write(tmp_path, text))


@pytest.mark.parametrize("section,key", [("quail_mc", "batch_size"), ("crawl", "requests_per_minute"),
                                         ("discover", "limit")])
def test_booleans_are_not_numbers(repo, tmp_path, section, key):
    raw = yaml.safe_load((PROJECT_PARAMS).read_text())
    raw[section][key] = True
    with pytest.raises(ParamsError, match=f"{key}: expected a number, got true"):
        load_params(_write(tmp_path, yaml.safe_dump(raw)))


@pytest.mark.parametrize("name", ["/some/dir", "../outside", "a/b", "", "."])
def test_pywb_collection_is_a_plain_name(repo, tmp_path, name):
    raw = yaml.safe_load((PROJECT_PARAMS).read_text())
    raw["archive"]["collection"] = name
    with pytest.raises(ParamsError, match="archive.collection"):
        load_params(_write(tmp_path, yaml.safe_dump(raw)))


def test_pywb_helper_refuses_a_path_as_collection_and_deletes_nothing(tmp_path):
    from pipeline.wayback.pywb_server import LocalPywb

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("x")
    server = LocalPywb([], tmp_path / "root", collection=str(victim))
    with pytest.raises(ValueError, match="plain name"):
        server._prepare(tmp_path)
    assert (victim / "keep.txt").exists()


def test_a_one_value_experiment_is_a_one_line_diff_of_params_yaml(tmp_path, repo):
    """`dvc exp run -S quail.pmi_window=5` rewrites params.yaml through DVC's YAML round trip
    (``dvc.utils.hydra.apply_overrides``, what `exp run --set-param` calls): the file is kept in the layout
    that round trip writes, so one changed value is one changed line and every comment survives."""
    import difflib

    from dvc.utils.hydra import apply_overrides

    original = (PROJECT_PARAMS).read_text()
    copy = tmp_path / "params.yaml"
    copy.write_text(original)
    apply_overrides(str(copy), ["quail.pmi_window=5"])
    after = copy.read_text()
    changed = [line for line in difflib.unified_diff(original.splitlines(), after.splitlines(), n=0, lineterm="")
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert len(changed) == 2, changed
    assert changed[0].startswith("-  pmi_window: 10") and changed[1].startswith("+  pmi_window: 5"), changed
    assert original.count("#") == after.count("#")  # no comment lost


def test_bad_params_under_plain_dvc_repro_leave_the_workspace_as_it_was(repo, tmp_path):
    """DVC deletes a stage's outputs before it runs the stage's command, so the stage's own params check
    comes too late: the check_params stage, which every stage depends on, must stop a plain `dvc repro`
    before the first stage that owns data (sample) is touched."""
    import os
    import shutil

    from tests.conftest import venv_bin

    work = tmp_path / "checkout"
    work.mkdir()
    for name in ("flows", "pipeline"):
        shutil.copytree(repo / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("dvc.yaml", "paths.yaml"):
        shutil.copy(repo / name, work / name)
    text = (PROJECT_PARAMS).read_text()
    (work / "params.yaml").write_text(text.replace("\nsample:\n", "\nsample:\n  typo_key: 1\n", 1))
    env = dict(os.environ, PATH=f"{Path(venv_bin('dvc')).parent}:{os.environ['PATH']}", PYTHONPATH=str(work))
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run([venv_bin("dvc"), "init", "-q"], cwd=work, check=True, env=env)
    subprocess.run([venv_bin("dvc"), "config", "core.analytics", "false"], cwd=work, check=True, env=env)
    (work / "data" / "sample").mkdir(parents=True)
    (work / "data" / "sample" / "bbc.warc.gz").write_bytes(b"the archive a user already has")
    res = subprocess.run([venv_bin("dvc"), "repro", "sample"], cwd=work, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode != 0
    assert "sample.typo_key" in res.stdout + res.stderr, res.stdout[-2000:] + res.stderr[-2000:]
    assert (work / "data" / "sample" / "bbc.warc.gz").read_bytes() == b"the archive a user already has"
    assert not (work / "reports" / "sample.json").exists()


def test_difficulty_accepts_every_quail_system_and_only_those():
    """One list of QuAIL system names (pipeline.quail.systems): the params check once refused avgcos and lstm,
    which the baselines stage produces."""
    from pipeline.quail.systems import HEURISTIC_BASELINES, all_systems
    from pipeline.stages.quail_baselines import SYSTEMS

    assert SYSTEMS == HEURISTIC_BASELINES
    assert project_section("difficulty", models=list(all_systems())).models == list(all_systems())
    with pytest.raises(ParamsError, match="unknown systems"):
        project_section("difficulty", models=["bert"])


def test_a_live_archive_needs_a_crawl_rate(tmp_path):
    """0 (no limit) is for the local archive the crawl stage serves itself; the Wayback Machine gets a rate."""
    live = "archive: {endpoint: https://web.archive.org}\ncrawl: {contact: me@example.org, requests_per_minute: 0}\n"
    with pytest.raises(ParamsError, match="crawl.requests_per_minute: a live archive .* needs a rate limit"):
        load_params(_with(tmp_path, live))
    assert load_params(_with(tmp_path, live.replace("requests_per_minute: 0", "requests_per_minute: 60")))


def test_tests_read_the_committed_params_not_an_experiments_values(repo):
    """`dvc exp run -S` leaves its values in the workspace's params.yaml; the suite reads the committed file,
    so `make test` after an experiment tests the project, not the experiment."""
    import pipeline.params

    committed = subprocess.run(["git", "show", "HEAD:params.yaml"], cwd=repo, capture_output=True, check=True).stdout
    assert PROJECT_PARAMS.read_bytes() == committed
    assert pipeline.params.PROJECT_PARAMS_FILE == PROJECT_PARAMS
    assert project_section("quail").model_dump(mode="json") == yaml.safe_load(committed)["quail"]


@pytest.mark.parametrize("key, value, error", [
    ("retrieve.k", 10**9, "less than or equal to 1000"),
    ("span_window.max_steps", 10**12, "over the limit"),
    ("quail_mc.learning_rate", float("inf"), "over the limit|finite"),
    ("quail_mc.learning_rate", float("nan"), "over the limit|finite|nan"),
    ("quail_mc.batch_size", 10**9, "over the limit"),
    ("quail.lstm_hidden", 10**9, "less than or equal to 4096"),
    ("strategyqa_cv.folds", 10**6, "less than or equal to 100"),
])
def test_a_run_cannot_size_work_without_bound(key, value, error):
    """Science keys a run may set that size work have an upper bound, refused with the key named before any
    stage runs (a point's check validates against the schema)."""
    from pipeline.experiments.sweep import SweepError, check_point

    with pytest.raises(SweepError, match=error):
        check_point({key: value})


def test_a_check_across_keys_names_them_without_echoing_the_whole_file(repo, tmp_path):
    """archive.endpoint without crawl.contact is checked on the whole file: the message names the keys and
    what to do, not the thousands of characters of every section it was given."""
    text = PROJECT_PARAMS.read_text().replace("endpoint: local", "endpoint: https://web.archive.org", 1)
    assert "endpoint: https://web.archive.org" in text
    with pytest.raises(ParamsError) as err:
        load_params(_write(tmp_path, text))
    message = str(err.value)
    assert "crawl.contact" in message and "archive.endpoint" in message
    assert len(message) < 400 and "benchmark_sources" not in message, message


def test_the_experiment_tools_say_which_environment_they_need(repo):
    """`python -m pipeline.experiments.would_rerun` with a Python that lacks the project's packages: one line
    naming the environment to activate, not a traceback."""
    if not Path("/usr/bin/python3").exists():
        pytest.skip("no system Python to run without the project's environment")
    res = subprocess.run(["/usr/bin/python3", "-m", "pipeline.experiments.would_rerun", "-S", "quail.seed=1"],
                         cwd=repo, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "runs in the project's environment" in res.stderr and ".venv/bin/activate" in res.stderr


def test_the_facts_control_alone_takes_control_max_steps():
    """On two cores the positive control trains the budget at which it learns, the paper's settings their own;
    null gives every setting max_steps (the GPU profile)."""
    from pipeline.params import project_section

    p = project_section("strategyqa_qa", max_steps=20, control_max_steps=250)
    assert p.steps_for("ctl_facts") == 250 and p.budget_for("ctl_facts").max_steps == 250
    assert {p.steps_for(s) for s in ("question_only", "ir_q", "ir_d", "ir_ora_d", "ora_p", "ctl_ora_p1")} == {20}
    assert project_section("strategyqa_qa", max_steps=20, control_max_steps=None).steps_for("ctl_facts") == 20


def test_every_science_number_is_bounded_above():
    """Walks the schema: every number a run may set (a ``Science`` field) has an upper bound, in its field, in
    BUDGET_LIMITS (training sections) or in SCIENCE_LIMITS; a new key without one fails here until bounded."""
    import typing

    import annotated_types

    from pipeline.common.trust import Trust
    from pipeline.params import BUDGET_LIMITS, SCIENCE_LIMITS, Params
    from pipeline.training.config import TrainBudget

    unbounded = []
    for section, field in Params.model_fields.items():
        model = field.annotation
        for name, f in model.model_fields.items():
            if Trust.SCIENCE not in [*f.metadata, *getattr(f.annotation, "__metadata__", ())]:
                continue
            kinds = typing.get_args(f.annotation) if typing.get_origin(f.annotation) is typing.Union else (f.annotation,)
            if not any(k in (int, float) for k in kinds) or any(k is bool for k in kinds):
                continue
            if any(isinstance(m, (annotated_types.Le, annotated_types.Lt)) for m in f.metadata):
                continue
            if (issubclass(model, TrainBudget) and name in BUDGET_LIMITS) or f"{section}.{name}" in SCIENCE_LIMITS:
                continue
            unbounded.append(f"{section}.{name}")
    assert not unbounded, unbounded


@pytest.mark.parametrize("key, value, error", [
    ("sample.duplicate_captures", 10**12, "outside 0..10000"),
    ("sample.strategyqa_questions", 10**12, "outside"),
    ("longformer.attention_window", 10**12, "outside 2..16384"),
    ("span_window.doc_stride", 1, "outside 16..16384"),
    ("span_window.checkpoint_every", 1, "more than 100 checkpoints"),
    ("span_window.eval_every", 1, "more than 100 times in 200 steps; at least 2"),
    ("strategyqa_qa.eval_every", 1, "more than 100 times in 400 steps"),  # the control's budget counts
    ("quail.seed", 2**70, "quail.seed"),
])
def test_science_keys_that_size_work_are_bounded(key, value, error):
    from pipeline.params import Params

    data = yaml.safe_load(PROJECT_PARAMS.read_text())
    section, name = key.split(".")
    data[section][name] = value
    with pytest.raises(ValueError, match=error):
        Params.model_validate(data)

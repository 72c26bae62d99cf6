"""The GPU profile (`make repro-gpu`): a kept set of overrides that DVC applies as one experiment. No GPU is
needed to check it: its keys exist, its values pass the params schema, DVC's own override parser writes
exactly them into params.yaml, and a hostile profile is refused before DVC runs."""

from __future__ import annotations

import pytest
import yaml

from pipeline.experiments.profile import exp_run_command, load_profile
from pipeline.experiments.sweep import SweepError
from pipeline.params import load_params
from tests.params_files import PROJECT_PARAMS
from pipeline.params_trust import TRAINED_SECTIONS

PROFILE = "infra/training/gpu-profile.yaml"


def test_the_gpu_profile_sets_real_budgets_and_dvc_applies_it_as_written(repo, tmp_path):
    from dvc.utils.hydra import apply_overrides

    profile = load_profile(repo / PROFILE)
    copy = tmp_path / "params.yaml"
    copy.write_text((PROJECT_PARAMS).read_text())
    overrides = [a for a in exp_run_command(profile, "gpu-profile")[5:] if a != "-S"]
    apply_overrides(str(copy), overrides)  # what `dvc exp run -S` calls
    p = load_params(copy)
    for key, value in profile.items():
        section, name = key.split(".")
        assert getattr(getattr(p, section), name) == value, key
    cpu = load_params(PROJECT_PARAMS)
    assert p.span_window.max_seq_len == 512 and p.longformer.max_seq_len == 4096
    assert p.quail_mc.max_seq_len == 512 and p.strategyqa_qa.max_seq_len == 512
    assert p.strategyqa_cv.folds >= 2 and cpu.strategyqa_cv.folds == 0  # cross-validation on the GPU only
    for section in TRAINED_SECTIONS:
        gpu_s, cpu_s = getattr(p, section), getattr(cpu, section)
        assert gpu_s.device == "auto"  # the worker's setting: CUDA with bf16 where there is one (pick_device)
        assert gpu_s.batch_size > cpu_s.batch_size and gpu_s.batch_size * gpu_s.max_steps > cpu_s.batch_size * cpu_s.max_steps
        assert gpu_s.patience > 0 and gpu_s.eval_every < gpu_s.max_steps


@pytest.mark.parametrize("text, error", [
    ("quail_mc.max_steps: 0\n", "greater than or equal to 1"),
    ("quail_mc.max_stepz: 10\n", "not in params.yaml"),
    ("params.yaml:quail_mc.max_steps: 10\n", "section.key"),
    ("../x.yaml:a: 1\n", "section.key"),
    ("quail_mc.model_name_or_path: ${oc.env:AWS_SECRET_ACCESS_KEY}\n", "interpolation"),
    ("quail_mc.max_steps: [1, 2]\n", "valid integer"),  # a list where the schema wants a number
    ("quail_mc.seeds: [[1], 2]\n", "plain number, string"),
    ("quail_mc.seeds: {a: 1}\n", "plain number, string"),
    ("- a\n", "mapping"),
    ("quail_mc.device: cuda\n", "may not set quail_mc.device"),
    ("distributed.rdzv_endpoint: evil.example:29400\n", "may not set distributed.rdzv_endpoint"),
    ("quail_mc.model_name_or_path: /etc\n", "models installed on this worker"),
])
def test_a_bad_profile_is_refused_before_dvc_runs(tmp_path, text, error):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(SweepError, match=error.replace("[", r"\[")):
        load_profile(path)


def test_the_profile_file_is_flat_yaml(repo):
    data = yaml.safe_load((repo / PROFILE).read_text())
    plain = (str, int, float, bool, type(None))
    assert all("." in k and (isinstance(v, plain) or (isinstance(v, list) and all(isinstance(x, plain) for x in v)))
               for k, v in data.items())
    assert data["span_window.seeds"] == data["quail_mc.seeds"] and len(data["quail_mc.seeds"]) == 5
    assert len(data["strategyqa_qa.seeds"]) == 7  # StrategyQA reports each accuracy over 7 runs
    assert data["boolq_aux.seeds"][0] == data["strategyqa_qa.seeds"][0] and len(data["boolq_aux.seeds"]) == 5

"""The StrategyQA positive-control pair (the facts control and question-only) trains under its own seeds, so
compare can give it a verdict while the other settings keep the section's one run: the seeds reach the training
runs' folders and the prediction, a repeated or out-of-range seed is refused, null means the section's."""

from __future__ import annotations

import pytest

from pipeline.common.layout import PATHS
from pipeline.params import ParamsError, project_section
from pipeline.strategyqa.config import CONTROL_PAIR


def test_the_pair_trains_its_own_seeds_and_the_rest_the_sections():
    p = project_section("strategyqa_qa", seeds=[42], control_seeds=[42, 43, 44], control_max_steps=400,
                        max_steps=20)
    assert set(CONTROL_PAIR) == {"ctl_facts", "question_only"}
    assert p.seeds_for("ctl_facts") == p.seeds_for("question_only") == [42, 43, 44]
    assert p.seeds_for("ir_q") == [42]
    assert p.budget_for("ctl_facts").seeds == [42, 43, 44] and p.budget_for("ctl_facts").max_steps == 400
    assert p.budget_for("question_only").max_steps == 20 and p.budget_for("ora_p").seeds == [42]
    assert project_section("strategyqa_qa", seeds=[7], control_seeds=None).seeds_for("ctl_facts") == [7]


@pytest.mark.parametrize("bad, message", [([42, 42], "repeat a seed"), ([-1], "outside"), ([], "at least 1")])
def test_bad_control_seeds_are_refused(bad, message):
    with pytest.raises(ParamsError, match=message):
        project_section("strategyqa_qa", control_seeds=bad)


def test_each_control_run_trains_in_its_own_folder(monkeypatch):
    from pipeline.params import load_params
    from pipeline.stages import train_strategyqa_qa as stage

    params = load_params()
    params = params.model_copy(update={"strategyqa_qa": params.strategyqa_qa.model_copy(
        update={"seeds": [42], "control_seeds": [42, 43, 44]})})
    facts = PATHS.strategyqa_qa["ctl_facts"].model_dir
    assert stage._run_dir(params, "ctl_facts", 42) == facts
    assert stage._run_dir(params, "ctl_facts", 44) == facts / "seeds" / "44"
    assert stage._live_dir(params, "question_only", 43).name == "43"
    with pytest.raises(ValueError, match="seed 43 is not one of"):
        stage._run_dir(params, "ir_q", 43)  # the other settings train the section's seeds only

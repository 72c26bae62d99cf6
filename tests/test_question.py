"""`python -m pipeline.experiments.question`: one question, its gold, every system's prediction and score."""

from __future__ import annotations

import json

import pytest

from pipeline.experiments.question import main, render

RECORD = {"unit": "f001", "domain": "fiction", "question_type": "Causality", "question": "Why did she leave?",
          "options": ["she was tired", "it rained", "not enough information", "she was late"], "gold": 1,
          "systems": {"mc_full": {"prediction": 1, "runs": 3, "acc": 66.67},
                      "random": {"prediction": 3, "runs": 1, "acc": 0.0}}}


def test_a_question_shows_its_gold_option_and_each_systems_choice_and_score():
    lines = render("quail/challenge", "f001_3", RECORD)
    assert lines[0] == "quail/challenge  f001_3  (unit f001, domain fiction, question type Causality)"
    assert "gold: 1) it rained" in lines and "  2) not enough information" in lines
    assert any(line.startswith("mc_full") and "66.7" in line and "1) it rained" in line for line in lines)
    assert any(line.startswith("random ") and "0.0" in line and "3) she was late" in line for line in lines)


def test_the_command_finds_a_question_lists_a_set_and_names_what_is_missing(tmp_path, capsys):
    path = tmp_path / "per_question.json"
    path.write_text(json.dumps({"quail/challenge": {"f001_3": RECORD}}))
    assert main(["f001_3", "--file", str(path)]) == 0 and "gold: 1) it rained" in capsys.readouterr().out
    assert main(["--eval", "quail/challenge", "--file", str(path)]) == 0 and capsys.readouterr().out == "f001_3\n"
    assert main(["nope", "--file", str(path)]) == 2 and "no question 'nope'" in capsys.readouterr().err
    assert main(["--eval", "nlquad/dev", "--file", str(path)]) == 2
    assert main(["x", "--file", str(tmp_path / "absent.json")]) == 2 and "dvc repro compare" in capsys.readouterr().err


def test_the_compare_check_refuses_a_per_question_file_whose_means_are_not_the_pairs():
    from pipeline.stages.compare import check_per_question

    pairs = [{"track": "quail", "eval": "challenge", "system": "mc_full", "baseline": "random", "figure": "acc",
              "questions": 1, "system_mean": 66.67}]
    check_per_question({"quail/challenge": {"f001_3": RECORD}}, pairs)
    with pytest.raises(RuntimeError, match="per-question mc_full acc on challenge"):
        check_per_question({"quail/challenge": {"f001_3": RECORD}}, [{**pairs[0], "system_mean": 40.0}])

"""A NLQuAD release file in place of the crawl: read and checked record by record, built into the same data set,
split as the authors split it, and refused by name where it is malformed."""

from __future__ import annotations

import json

import pytest

from pipeline.nlquad.release import ReleaseError, load_release, release_splits, split_of

DOC = ("Ministers met on Monday to discuss the plan. The plan would change how schools are funded. "
       "Critics say it favours cities. Supporters say it is fair to every region and long overdue.")


def _release_file(folder, name: str, articles: int, prefix: str) -> None:
    data = []
    for a in range(articles):
        start = DOC.index("Critics")
        data.append({"title": f"{prefix} story {a}", "paragraphs": [{"context": DOC, "qas": [
            {"id": f"{prefix}-{a}", "question": "What do critics say?",
             "answers": [{"text": DOC[start:], "answer_start": start}]}]}]})
    (folder / name).write_text(json.dumps({"version": "1.0", "data": data}))


def test_the_file_name_says_the_split():
    from pathlib import Path

    assert [split_of(Path(n)) for n in ("NLQuAD_train.json", "val.json", "nlquad-eval.json", "dev.json")] == \
        ["train", "dev", "test", "dev"]
    with pytest.raises(ReleaseError, match="does not say its split"):
        split_of(Path("nlquad.json"))


def test_a_release_is_read_whole_and_keeps_its_split(tmp_path):
    for name, n, prefix in (("NLQuAD_train.json", 4, "tr"), ("NLQuAD_val.json", 2, "va"), ("NLQuAD_eval.json", 2, "ev")):
        _release_file(tmp_path, name, n, prefix)
    dataset = load_release(tmp_path)
    qa = dataset["data"][0]["paragraphs"][0]["qas"][0]
    assert qa["answers"][0]["answer_end"] == len(DOC)  # the span's end, as the pipeline's own build writes it
    splits = release_splits(dataset)
    assert {k: len(v["data"]) for k, v in splits.items()} == {"train": 4, "dev": 2, "test": 2}
    assert all(a["paragraphs"][0]["qas"][0]["id"].startswith("ev") for a in splits["test"]["data"])
    assert release_splits({"data": [{"paragraphs": []}]}) is None  # the crawl's articles: the split stage draws


@pytest.mark.parametrize("mutate, error", [
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(answer_start=3), "not the context's text"),
    (lambda d: d["data"][1]["paragraphs"][0]["qas"][0].update(id="tr-0"), "appears twice"),
    (lambda d: d["data"][0].pop("paragraphs"), "'paragraphs' list"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0].pop("question"), "lacks an 'id'"),
])
def test_a_malformed_release_is_refused_by_file_and_record(tmp_path, mutate, error):
    _release_file(tmp_path, "train.json", 2, "tr")
    raw = json.loads((tmp_path / "train.json").read_text())
    mutate(raw)
    (tmp_path / "train.json").write_text(json.dumps(raw))
    with pytest.raises(ReleaseError, match=error):
        load_release(tmp_path)


def test_build_and_split_read_a_release_in_place_of_the_crawl(tmp_path, monkeypatch):
    from flows.stage import stage_flow
    from tests.params_files import write_params

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data/nlquad_release").mkdir(parents=True)
    for name, n, prefix in (("train.json", 6, "tr"), ("val.json", 2, "va"), ("eval.json", 3, "ev")):
        _release_file(tmp_path / "data/nlquad_release", name, n, prefix)
    params = write_params(tmp_path / "params.yaml", {"build_nlquad": {"source": "release"}})
    stats = stage_flow("build_nlquad").fn(params_file=params)
    assert stats["source"] == "release" and stats["questions"] == 11 and stats["rejected"] == {}
    assert "calibration" in stats and stats["calibration"]["checks"]
    sizes = stage_flow("split").fn(params_file=params)
    assert {k: v["questions"] for k, v in sizes.items()} == {"train": 6, "dev": 2, "test": 3}
    test = json.loads((tmp_path / "data/splits/test.json").read_text())
    assert sorted(a["paragraphs"][0]["qas"][0]["id"] for a in test["data"]) == ["ev-0", "ev-1", "ev-2"]
    card = (tmp_path / "data/nlquad_hf/README.md").read_text()
    assert "NLQuAD release files" in card

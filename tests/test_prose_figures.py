"""Figures in the README's and the docs' prose are found in the committed files they cite
(``pipeline.experiments.prose_figures``): a stale figure fails here, not in a reader's hands."""

from __future__ import annotations

import json

from pipeline.experiments.prose_figures import check, check_text


def test_every_figure_in_the_readme_and_docs_is_in_a_file_it_cites():
    """As committed: the manual describes the committed run, whatever a local rebuild has moved since."""
    unsupported = check(revision="HEAD")
    assert not unsupported, "\n".join(map(str, unsupported))


def _root(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports/train.json").write_text(json.dumps({"dev": {"f1": 50.5}, "share": 0.286, "s": 545.6}))
    (tmp_path / "reports/other.json").write_text(json.dumps({"acc": 61.25}))
    (tmp_path / "metrics/strategyqa").mkdir(parents=True)
    (tmp_path / "metrics/strategyqa/paper_ir_q.json").write_text(json.dumps({"R@10": 17.4}))
    return tmp_path


def _flagged(text: str, root) -> list[str]:
    return [u.figure for u in check_text("doc.md", text, root)]


def test_a_stale_figure_is_flagged_and_a_current_one_is_not(tmp_path):
    root = _root(tmp_path)
    # the reviewer's case: the prose says dev F1 43.6 where the report says 50.5
    assert _flagged("The model reaches dev F1 43.6 (`reports/train.json`).\n", root) == ["43.6"]
    assert _flagged("The model reaches dev F1 50.5 (`reports/train.json`).\n", root) == []
    # its own rounding: 61.25 may be written 61.3 or 61.2, not 61.4; a share as a percent; seconds as minutes
    assert _flagged("Accuracy 61.3, 61.2 and 61.4 (`reports/other.json`).\n", root) == ["61.4"]
    assert _flagged("28.6% of them, in 9.1 minutes (`reports/train.json`).\n", root) == []
    # a signed difference is its absolute value; the papers' rows are sources everywhere
    assert _flagged("+50.5 over it, against the paper's 17.4 (`reports/train.json`).\n", root) == []


def test_what_a_figure_may_cite(tmp_path):
    root = _root(tmp_path)
    # a paragraph without a citation of its own reads its section's; one with its own reads only those
    section = "## Results (`reports/train.json`)\n\nDev F1 50.5.\n\nAccuracy 50.5 (`reports/other.json`).\n"
    assert _flagged(section, root) == ["50.5"]
    assert [u.line for u in check_text("doc.md", section, root)] == [5]
    # nothing cited, no section citation: nothing supports a figure
    assert _flagged("Dev F1 50.5.\n", root) == ["50.5"]
    # a cited file that does not exist supports nothing
    assert _flagged("Dev F1 50.5 (`reports/absent.json`).\n", root) == ["50.5"]


def test_generated_blocks_code_and_versions_are_not_prose(tmp_path):
    root = _root(tmp_path)
    text = ("<!-- table:start (generated) -->\n| a | 99.9 |\n<!-- table:end -->\n"
            "Run `--lr 3.5e-5 --x 12.5` or:\n```bash\nsleep 0.5\n```\n"
            "DVC 3.67 and QuAIL 1.3 files, read as versions.\n")
    assert _flagged(text, root) == []
    assert _flagged("A table row | 12.5 | of a hand table (`reports/train.json`)\n", root) == ["12.5"]

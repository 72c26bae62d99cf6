"""Input data that reaches HTML: a plot value cannot close DVC's <script> and run, an artifact cell cannot
add HTML or break its table."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from flows.metrics_artifact import markdown_table
from pipeline.common.safe_text import markdown_cell, write_plot_csv
from tests.conftest import venv_bin


HOSTILE = "</script><script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"


def test_plot_rows_are_escaped_and_quoted(tmp_path):
    write_plot_csv(tmp_path / "p.csv", ("qid", "question_type", "gap"), [[HOSTILE, "a,b", 1.5], ["q2", ">=2000", None]])
    text = (tmp_path / "p.csv").read_text()
    assert "<" not in text and "&lt;/script>" in text
    assert '"a,b"' in text and "q2,>=2000,\n" in text  # a comma stays in its column; '>' alone is harmless


def test_a_list_or_mapping_in_a_plot_row_is_escaped_too(tmp_path):
    """A list cell (QuAIL question types) was written as its str(), unescaped."""
    write_plot_csv(tmp_path / "p.csv", ("qid", "types", "meta"),
                   [["q1", [HOSTILE, "Causality"], {"why": HOSTILE}], ["q2", ("a", None), True]])
    text = (tmp_path / "p.csv").read_text()
    assert "<" not in text and text.count("&lt;/script>") == 4, text
    assert "Causality" in text and "q2,a; ,True" in text


def test_artifact_cells_carry_no_html_and_no_column_break():
    cell = markdown_cell("a | b <img src=x onerror=alert(1)>\n`code`")
    assert "<" not in cell and "\\|" in cell and "\n" not in cell and "`" not in cell
    table = markdown_table("quail", {HOSTILE: {"accuracy": 50.0}}, {})
    assert "<script" not in table and "<img" not in table


@pytest.mark.slow  # starts headless Chromium
def test_a_hostile_plot_value_does_not_run_in_the_dvc_plots_page(tmp_path):
    """The page `dvc plots show` writes, opened in headless Chromium: the value is shown, never run."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("QA_PIPELINE_REQUIRE_BROWSER"):
            pytest.fail("chromium is required here (QA_PIPELINE_REQUIRE_BROWSER) but not installed")
        pytest.skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([venv_bin("dvc"), "init", "-q"], cwd=tmp_path, check=True)
    write_plot_csv(tmp_path / "difficulty.csv", ("qid", "question_type", "model_accuracy", "gap"),
                   [[f"q{i}", HOSTILE, 10.0 * i, float(i)] for i in range(3)])
    res = subprocess.run([venv_bin("dvc"), "plots", "show", "difficulty.csv", "-x", "gap", "-y", "model_accuracy",
                          "--out", "page"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    page = tmp_path / "page" / "index.html"
    assert "&lt;/script>" in page.read_text()
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180).stdout
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert dom and (title is None or "pwned" not in title.group(1)), dom[:2000]

"""`dvc plots show` as a user sees it on a machine without internet: the page loads nothing from outside,
every chart has data, labelled axes and the right axis types, and headless Chromium draws coloured marks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import venv_bin

pytestmark = pytest.mark.slow  # starts headless Chromium

TEMPLATE = Path(".plots-vendor/offline_template.html")


@pytest.fixture(scope="module")
def plots_html(repo, tmp_path_factory) -> Path:
    if not (repo / TEMPLATE).exists():  # made by `make setup`; build it here when run outside make
        subprocess.run([venv_bin("python"), "-m", "pipeline.common.plots_template"], cwd=repo, check=True)
    out = tmp_path_factory.mktemp("plots")
    res = subprocess.run([venv_bin("dvc"), "plots", "show", "--out", str(out)], cwd=repo, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return out / "index.html"


def _specs(html: str) -> list[dict]:
    """The vega-lite specs DVC embedded (``var spec = {...};`` before each ``vegaEmbed`` call)."""
    specs = []
    decoder = json.JSONDecoder()
    for m in re.finditer(r"var spec = ", html):
        spec, _ = decoder.raw_decode(html, m.end())
        specs.append(spec)
    return specs


def test_the_page_loads_nothing_from_outside(plots_html):
    html = plots_html.read_text(encoding="utf-8")
    assert not re.search(r"""<(?:script|link|img|iframe)[^>]+(?:src|href)\s*=\s*["']?(?:https?:)?//""", html, re.I)
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html
    specs = _specs(html)
    assert len(specs) >= 7
    for spec in specs:
        assert "url" not in spec.get("data", {}), spec.get("title")  # data inline, not fetched


def test_every_chart_has_data_labelled_axes_and_the_right_types(plots_html):
    specs = _specs(plots_html.read_text(encoding="utf-8"))
    for spec in specs:
        title = spec["title"] if isinstance(spec["title"], str) else spec["title"].get("text")
        assert spec["data"]["values"], f"{title}: empty"
        enc = spec["encoding"]
        assert enc["x"].get("title") and enc["y"].get("title"), title
        assert enc["y"]["type"] == "quantitative", title
        if "document length" in title:
            assert enc["x"]["type"] == "quantitative", title
            assert all(isinstance(v[enc["x"]["field"]], (int, float)) or str(v[enc["x"]["field"]]).isdigit()
                       for v in spec["data"]["values"]), title
            systems = {v["system"] for v in spec["data"]["values"]}
            assert {"bm25l", "random_window", "first_window", "last_window", "span_window"} <= systems, systems
            assert enc["color"]["field"] == "system"
        if "(%)" in enc["y"]["title"]:  # percentages on one scale: 0-100, never 0-1
            ys = [float(v[enc["y"]["field"]]) for v in spec["data"]["values"]]
            assert max(ys) > 1.0 and max(ys) <= 100.0, title
        if "per year" in title:
            assert enc["color"]["field"] == "template"


def test_each_chart_has_one_legend_per_field_and_a_colour_per_series(plots_html):
    """The revision's dash and point shape share one legend (two printed 'revision: workspace' twice), and the
    colour range holds as many distinct colours as the chart has series (vega's default ten repeated across the
    14 models of the learning-rate chart)."""
    for spec in _specs(plots_html.read_text(encoding="utf-8")):
        title = spec["title"] if isinstance(spec["title"], str) else spec["title"].get("text")
        enc = spec["encoding"]
        legends: dict[str, int] = {}
        for channel in ("color", "strokeDash", "shape", "size", "opacity"):
            if channel in enc and enc[channel].get("legend", {}) is not None:
                legends[enc[channel]["field"]] = legends.get(enc[channel]["field"], 0) + 1
        assert all(n == 1 for n in legends.values()), (title, legends)
        color = enc.get("color", {})
        values = {v.get(color.get("field")) for v in spec["data"]["values"]} if color.get("field") != "model" else {
            v["filename"].strip("/").split("/")[0] for v in spec["data"]["values"]}
        palette = color.get("scale", {}).get("range")
        assert len(values) <= (len(set(palette)) if palette else 10), (title, len(values), palette)


def test_every_trained_model_has_a_learning_curve(plots_html):
    """One line per model in each track's loss and dev charts (DVCLive logs), steps on a numeric axis."""
    specs = _specs(plots_html.read_text(encoding="utf-8"))
    expected = {"NLQuAD": 2, "StrategyQA": 8, "QuAIL": 4}  # StrategyQA: 7 settings and the auxiliary BoolQ model
    seen = {}
    for spec in specs:
        title = spec["title"] if isinstance(spec["title"], str) else spec["title"].get("text")
        if "training loss" not in title and "during training" not in title:
            continue
        enc = spec["encoding"]
        assert enc["x"]["field"] == "step" and enc["x"]["type"] == "quantitative", title
        assert enc["color"]["field"] == "model", title
        models = {v["filename"].strip("/").split("/")[0] for v in spec["data"]["values"]}
        track = next(t for t in expected if title.startswith(t))
        assert len(models) == expected[track], (title, models)
        seen[title] = models
    assert len(seen) == 6, sorted(seen)


def test_headless_chromium_draws_the_charts(plots_html, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("QA_PIPELINE_REQUIRE_BROWSER"):
            pytest.fail("chromium is required here (QA_PIPELINE_REQUIRE_BROWSER) but not installed")
        pytest.skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
    from PIL import Image

    shot = tmp_path / "plots.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1400,2600", "--virtual-time-budget=15000", f"--screenshot={shot}",
                    plots_html.as_uri()], capture_output=True, timeout=180, check=True)
    import numpy as np

    rgb = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int16)
    coloured = int(((rgb.max(axis=2) - rgb.min(axis=2)) > 60).sum())  # marks, not text or grid
    assert coloured > 5000, f"only {coloured} coloured pixels: the charts did not render"


def _browser() -> str:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("QA_PIPELINE_REQUIRE_BROWSER"):
            pytest.fail("chromium is required here (QA_PIPELINE_REQUIRE_BROWSER) but not installed")
        pytest.skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
    return browser


@pytest.mark.parametrize("template,series", [("lines_by_system", {"system": "bm25l"}),
                                             ("curves_by_model", {"filename": "span_window/loss.tsv"})])
def test_dvc_plots_diff_gives_each_revision_its_own_symbol(repo, tmp_path, template, series):
    """`dvc plots diff` puts two revisions of a line in one chart (DVC adds their ``rev``): besides the dash,
    their points must differ in shape, or a reader cannot tell the revisions apart where the lines cross or
    a revision has single points. Drawn by headless Chromium from the offline page, as SVG."""
    if not (repo / TEMPLATE).exists():
        subprocess.run([venv_bin("python"), "-m", "pipeline.common.plots_template"], cwd=repo, check=True)
    fill = {"<DVC_METRIC_X>": "x", "<DVC_METRIC_Y>": "y", "<DVC_METRIC_TITLE>": "t", "<DVC_METRIC_X_LABEL>": "x",
            "<DVC_METRIC_Y_LABEL>": "y"}
    text = (repo / ".dvc/plots" / f"{template}.json").read_text()
    for key, value in fill.items():
        text = text.replace(key, value)
    rows = [{"x": x, "y": 10.0 * x + (5 if rev == "HEAD" else 0), "rev": rev, **series}
            for rev in ("workspace", "HEAD") for x in (1, 2, 3)]
    spec = json.loads(text.replace('"<DVC_METRIC_DATA>"', json.dumps(rows)))
    page = tmp_path / "diff.html"
    page.write_text((repo / TEMPLATE).read_text().replace(
        "{plot_divs}", f"<div id='v'></div><script>vegaEmbed('#v', {json.dumps(spec)}, {{renderer: 'svg'}});</script>"))
    dom = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180).stdout
    marks = re.findall(r'<g class="mark-symbol role-mark[^"]*"[^>]*>(.*?)</g>', dom, re.S)
    assert marks, "no points drawn:\n" + dom[-2000:]
    shapes = {d for group in marks for d in re.findall(r' d="([^"]+)"', group)}
    assert len(shapes) == 2, shapes  # one symbol per revision

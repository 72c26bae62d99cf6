"""The budget record: a shorter budget is named only where the seeds' mean selection-dev curve says so."""

from pathlib import Path

import pytest

from benchmarks.budget_selection import seed_curves, summarise


def _curve(path: Path, rows: list[tuple[int, float]]) -> None:
    path.mkdir(parents=True)
    (path / "f1.tsv").write_text("step\tf1\n" + "".join(f"{s}\t{v}\n" for s, v in rows), encoding="utf-8")


def test_the_mean_over_seeds_picks_the_step_and_a_tie_goes_to_the_shorter_budget(tmp_path):
    live = tmp_path / "span_window"
    _curve(live / "plots/metrics/dev", [(100, 46.0), (200, 45.9)])
    _curve(live / "seeds/43/plots/metrics/dev", [(100, 45.9), (200, 46.2)])
    _curve(live / "seeds/44/plots/metrics/dev", [(100, 47.1), (200, 46.9)])
    out = summarise(seed_curves(live, "f1", 42))
    assert out["seeds"] == [42, 43, 44]
    assert out["by_step"]["100"]["mean"] == 46.33 and out["by_step"]["200"]["mean"] == 46.33
    assert out["best_mean_step"] == 100  # level: the shorter budget
    # one seed far above at the last step moves the mean there: the record follows the mean, not one seed
    _curve(tmp_path / "b/plots/metrics/dev", [(100, 40.0), (200, 50.0)])
    assert summarise(seed_curves(tmp_path / "b", "f1", 42))["best_mean_step"] == 200


def test_a_system_never_trained_here_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="no selection-dev curve"):
        seed_curves(tmp_path / "missing", "f1", 42)

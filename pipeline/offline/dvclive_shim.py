"""DVCLive's file format for a node where DVCLive cannot be installed.

DVCLive depends on DVC itself (and git libraries), which an offline compute node does not have. The training
loop logs through ``dvclive.Live`` (``pipeline.training.curves``); on the node the bundle puts this module on the
path as ``dvclive``, writing the same files DVCLive writes for the calls the loop makes: one
``plots/metrics/<name>.tsv`` per metric (``step`` and value, tab-separated, os.linesep, csv's number format) and
``metrics.json`` (the latest value of each metric nested by its path, the step; indent 4). It supports only those
calls, and refuses options it does not implement. ``tests/test_offline_node.py`` checks that it writes exactly
the bytes DVCLive writes for the same history.
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import Any


class Live:
    """The subset of ``dvclive.Live`` the training loop uses: ``step``, ``log_metric``, ``summary``,
    ``make_summary`` and ``end``."""

    def __init__(self, dir: str = "dvclive", resume: bool = False, report: str | None = None,
                 save_dvc_exp: bool = False, dvcyaml: str | None = None, **kwargs: Any) -> None:
        if resume or report is not None or save_dvc_exp or dvcyaml is not None or kwargs:
            raise NotImplementedError("the offline DVCLive writer supports only resume=False, report=None, "
                                      "save_dvc_exp=False, dvcyaml=None")
        self.dir = str(dir)
        self.summary: dict[str, Any] = {}
        self.step = 0
        self._written: set[Path] = set()

    def log_metric(self, name: str, val: float | int | str, timestamp: bool = False, plot: bool = True) -> None:
        if timestamp:
            raise NotImplementedError("the offline DVCLive writer logs no timestamps")
        if not isinstance(val, str) and (math.isnan(val) or math.isinf(val)):
            val = str(val)
        if plot:
            path = Path(self.dir) / "plots" / "metrics" / f"{name}.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            existed = path.exists()
            row = {"step": self.step, os.path.basename(name): val}
            with open(path, "a", encoding="utf-8", newline="") as fh:
                writer = csv.DictWriter(fh, row.keys(), delimiter="\t", lineterminator=os.linesep)
                if not existed:
                    writer.writeheader()
                writer.writerow(row)
        node = self.summary
        *parents, leaf = os.path.normpath(name).split(os.path.sep)
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = val

    def make_summary(self) -> None:
        self.summary["step"] = self.step
        path = Path(self.dir) / "metrics.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.summary, fh, indent=4)
            fh.write("\n")

    def end(self) -> None:
        if "step" in self.summary:
            self.step = self.summary["step"]
        self.make_summary()

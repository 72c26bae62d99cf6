#!/bin/bash
# StrategyQA with and without the auxiliary BoolQ model, cross-validated on the same folds, on an offline GPU node.
# Copy this file into the bundle (make gpu-bundle; cp infra/training/node-strategyqa-cv.sh gpu-bundle/) and run it
# there, in that folder:
#   bash node-strategyqa-cv.sh OUT [SETTING ...]
# Phase "aux": the bundle's params (the GPU profile: strategyqa_qa.start_from: boolq_aux) with strategyqa_cv.settings:
#   SETTING ... (default: the bundle's settings): train_boolq_aux, then strategyqa_cv -> OUT/cv_aux.tar.gz,
#   OUT/cv_aux.profile.json.
# Phase "base": the same params but strategyqa_qa.start_from: base: strategyqa_cv again, the same settings on the
#   same folds (strategyqa_cv.seed draws them, whatever the start) -> OUT/cv_base.tar.gz, OUT/cv_base.profile.json.
# A phase whose archive is already in OUT is skipped, and a phase cut short (a job limit) carries on where it
# stopped when the script is started again in the same bundle (the node skips finished stages, strategyqa_cv
# finished folds). Back here: python -m benchmarks.gpu_strategyqa_cv OUT --name gpu_strategyqa_cv_<device>
# JOBS=N (default 1): each phase trains its folds in N processes at once first (pipeline/offline/cv_folds.py; a
# 512-token MiniLM fold leaves most of a GPU idle), then strategyqa_cv reads their answers back and reports as
# always; the launch's timings go to OUT/NAME.folds.<time>.json. PHASES=aux or PHASES=base runs one phase: the two
# can run at once in two copies of the unpacked bundle (cp -a), writing into the same OUT.
set -euo pipefail
out=$1; shift
jobs=${JOBS:-1}
phases=${PHASES:-aux base}
[[ $phases =~ ^(aux|base|aux\ base)$ ]] || { echo "PHASES=$phases: aux, base or \"aux base\"" >&2; exit 2; }
[[ $jobs =~ ^[0-9]+$ ]] && (( jobs >= 1 && jobs <= 64 )) || { echo "JOBS=$jobs: a number from 1 to 64" >&2; exit 2; }
for s in "$@"; do [[ $s =~ ^[a-z_0-9]+$ ]] || { echo "bad setting: $s" >&2; exit 2; }; done
[ -f bundle.json ] || { echo "run this in the bundle's folder (no bundle.json here)" >&2; exit 2; }
mkdir -p "$out"
python3 -c "import sys; sys.path.insert(0, '.'); from pathlib import Path; from pipeline.offline.node import unpack; unpack(Path('.'))"
[ -f params.base.yaml ] || cp params.yaml params.base.yaml

phase() {  # NAME STAGES...: one node run into OUT/NAME.tar.gz, unless it is there
  local name=$1; shift
  if [ -f "$out/$name.tar.gz" ]; then echo "[cv] $name: in $out already, skipped"; return; fi
  if (( jobs > 1 )); then
    local before=("${@:1:$#-1}")  # the stages before strategyqa_cv (the auxiliary model), then the folds at once
    if (( ${#before[@]} )); then python3 -m pipeline.offline.node --out "node-$name" --only "${before[@]}"; fi
    python3 -m pipeline.offline.cv_folds --jobs "$jobs" --record "$out/$name.folds.$(date +%s).json" \
      || { echo "[cv] $name: a fold worker failed; start this script again in this folder to carry on" >&2; exit 3; }
  fi
  python3 -m pipeline.offline.node --out "node-$name" --only "$@"
  # with --only the node exits 0 when a job limit stopped it too: the phase is done when its stages are
  python3 -c "import json, sys; done = json.load(open('.node-done.json')); sys.exit(0 if all(s in done for s in sys.argv[1:]) else 3)" "$@" \
    || { echo "[cv] $name: cut short; start this script again in this folder to carry on" >&2; exit 3; }
  cp "node-$name/results.tar.gz" "$out/$name.tar.gz"
  cp "node-$name/gpu_profile.json" "$out/$name.profile.json"
}

if [[ " $phases " == *" aux "* ]]; then
python3 - "$@" <<'EOF1'
import sys
import yaml
params = yaml.safe_load(open("params.base.yaml", encoding="utf-8"))
if sys.argv[1:]:
    params["strategyqa_cv"]["settings"] = sys.argv[1:]
with open("params.yaml", "w", encoding="utf-8") as fh:
    yaml.safe_dump(params, fh, sort_keys=False)
EOF1
phase cv_aux train_boolq_aux strategyqa_cv
fi

if [[ " $phases " != *" base "* ]]; then
  :
elif [ -f "$out/cv_base.tar.gz" ]; then
  echo "[cv] cv_base: in $out already, skipped"
else
  python3 - "$@" <<'EOF2'
import json, os, sys
import yaml
params = yaml.safe_load(open("params.base.yaml", encoding="utf-8"))
params["strategyqa_qa"]["start_from"] = "base"
if sys.argv[1:]:
    params["strategyqa_cv"]["settings"] = sys.argv[1:]
with open("params.yaml", "w", encoding="utf-8") as fh:
    yaml.safe_dump(params, fh, sort_keys=False)
if not os.path.exists(".cv-base-started"):  # the aux phase finished strategyqa_cv: the base phase runs it again
    done = json.load(open(".node-done.json")) if os.path.exists(".node-done.json") else {}
    done.pop("strategyqa_cv", None)
    json.dump(done, open(".node-done.json", "w"), indent=2)
    open(".cv-base-started", "w").close()
EOF2
  phase cv_base strategyqa_cv
fi
cp params.base.yaml params.yaml

#!/bin/bash
# A learning-rate search for one StrategyQA setting on an offline GPU node. Copy this file into the bundle
# (make gpu-bundle; cp infra/training/node-strategyqa-search.sh gpu-bundle/) and run it there, in that folder:
#   bash node-strategyqa-search.sh OUT SETTING MAX_STEPS PATIENCE LR [LR ...]
# e.g. bash node-strategyqa-search.sh "$OUT" ora_p 600 10 2.0e-05 1.0e-05 3.0e-05
# Each learning rate is one node run of that setting's train -> predict -> evaluate chain with the bundle's
# params (the GPU profile) but for the three keys set here; OUT/<setting>_lr<LR>.tar.gz holds its outputs.
# Back here: python -m benchmarks.gpu_strategyqa_search OUT/*.tar.gz (figures, paired intervals, dev curves).
set -euo pipefail
out=$1 setting=$2 steps=$3 patience=$4; shift 4
[[ $setting =~ ^[a-z_]+$ && $steps =~ ^[0-9]+$ && $patience =~ ^[0-9]+$ ]] || { echo "bad arguments" >&2; exit 2; }
[ -f bundle.json ] || { echo "run this in the bundle's folder (no bundle.json here)" >&2; exit 2; }
mkdir -p "$out"
python3 -c "import sys; sys.path.insert(0, '.'); from pathlib import Path; from pipeline.offline.node import unpack; unpack(Path('.'))"
[ -f params.base.yaml ] || cp params.yaml params.base.yaml
stages="train_strategyqa_qa@$setting predict_strategyqa_qa@$setting evaluate_strategyqa_qa@$setting"
for lr in "$@"; do
  [[ $lr =~ ^[0-9.eE+-]+$ ]] || { echo "bad learning rate: $lr" >&2; exit 2; }
  sed -e "/^strategyqa_qa:/,/^[a-z]/ s/^  learning_rate: .*/  learning_rate: $lr/" \
      -e "/^strategyqa_qa:/,/^[a-z]/ s/^  max_steps: .*/  max_steps: $steps/" \
      -e "/^strategyqa_qa:/,/^[a-z]/ s/^  patience: .*/  patience: $patience/" params.base.yaml > params.yaml
  rm -rf .node-done.json "models/strategyqa_$setting" "dvclive/strategyqa_$setting" node-search-out
  python3 -m pipeline.offline.node --out node-search-out --only $stages
  cp node-search-out/results.tar.gz "$out/${setting}_lr$lr.tar.gz"
done
cp params.base.yaml params.yaml

# qa-pipeline: `make repro` builds everything on the offline sample, `make test` runs the test suite.
# Both create the environments first and reinstall only when a lock file changed. Bytecode is compiled at
# install time because this kind of machine sets PYTHONDONTWRITEBYTECODE (dvc would otherwise take ~3 s to start).
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
VENV_PYWB := .venv-pywb
UV := $(VENV)/bin/uv
# Where `pip install torch==2.13.0` finds the CPU build on this kind of machine. Elsewhere, point it at
# a folder of wheels or use: make setup UV_EXTRA="--index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple"
FIND_LINKS ?= /opt/wheels
UV_EXTRA ?= $(if $(wildcard $(FIND_LINKS)),--find-links $(FIND_LINKS),)

export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1
export PREFECT_HOME ?= $(CURDIR)/.prefect
export QA_PIPELINE_PYWB_BIN := $(CURDIR)/$(VENV_PYWB)/bin

.PHONY: help smoke setup exp-links reset repro nlquad strategyqa quail repro-gpu gpu-bundle gpu-import publish test test-durations test-fast serve plots exps results check-params clean-envs

# `make` or `make help`: the targets below that carry a `##` line, with what each makes and what it costs
# (measured on two cores with native bfloat16; fp32 training on an AVX2-only processor takes about 2.6x a step)
help:
	@echo "qa-pipeline: make <target>   (quick start: make setup, make smoke, then make repro and make results)"
	@sed -n 's/^## \([a-z-]*\) \{1,\}/\1\t/p' $(MAKEFILE_LIST) | awk -F'\t' '{printf "  %-12s %s\n", $$1, $$2}'

## setup       create .venv and .venv-pywb from the lock files (about 1 min; again only when a lock file changed)
setup: $(VENV)/.installed $(VENV)/.editable $(VENV_PYWB)/.installed .plots-vendor/offline_template.html

# `dvc exp run --queue` runs a copy in .dvc/tmp/exps/<tmpdir>/ and `--temp` in .dvc/tmp/exps/standalone/<tmpdir>/,
# where params' ../shared/... would name a folder there: these links make it the checkout's ../shared, for
# DVC's deps and the stages alike
setup: exp-links
exp-links:
	mkdir -p .dvc/tmp/exps/standalone
	ln -sfn ../../../../shared .dvc/tmp/exps/shared
	ln -sfn ../../../../../shared .dvc/tmp/exps/standalone/shared

# the project itself, editable: `import pipeline` works from any folder in the activated venv
$(VENV)/.editable: pyproject.toml $(VENV)/.installed
	$(UV) pip install --python $(VENV)/bin/python --no-deps --no-build-isolation --quiet -e .
	touch $@

# `dvc plots show` offline: vega, vega-lite and vega-embed from the npm registry, inlined into the HTML
# template that .dvc/config.local names (pipeline/common/plots_template.py)
.plots-vendor/offline_template.html: $(VENV)/.installed pipeline/common/plots_template.py
	$(VENV)/bin/python -m pipeline.common.plots_template

$(UV):
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check uv==0.13.9

# torch first, on its own, so the CPU build is what every later resolution sees.
$(VENV)/.installed: requirements.lock | $(UV)
	$(UV) pip install --python $(VENV)/bin/python $(UV_EXTRA) torch==2.13.0
	$(UV) pip install --python $(VENV)/bin/python $(UV_EXTRA) --compile-bytecode -r requirements.lock
	$(VENV)/bin/python -m pipeline.nlquad.punkt_data
	$(VENV)/bin/dvc config core.analytics false
	touch $@

# pywb pins versions that conflict with prefect's: it gets its own environment, used only as a subprocess.
$(VENV_PYWB)/.installed: requirements-pywb.lock | $(UV)
	test -x $(VENV_PYWB)/bin/python || $(UV) venv --quiet --python $(VENV)/bin/python $(VENV_PYWB)
	$(UV) pip install --python $(VENV_PYWB)/bin/python --compile-bytecode -r requirements-pywb.lock
	touch $@

check-params: setup
	$(VENV)/bin/python -m pipeline.params --check params.yaml

## smoke       every track end to end (crawl to compare) on a tiny sample in a scratch copy: checks an install (9.5-17 min)
smoke: setup
	$(VENV)/bin/python -m pipeline.experiments.smoke

## repro       every stage on the offline sample: data, indexes, baselines, models, comparisons (about 54 min)
repro: setup check-params
	$(VENV)/bin/python -m pipeline.experiments.repro

# one track and what it needs (DVC targets with their upstream stages): a first result without the whole run
## nlquad      the NLQuAD track alone: archive, extraction, baselines, both span models (about 20 min)
nlquad: setup check-params
	$(VENV)/bin/python -m pipeline.experiments.repro nlquad_baselines evaluate_span evaluate_longformer

## strategyqa  the StrategyQA track alone: Wikipedia index, retrieval, the yes/no models (about 8 min)
strategyqa: setup check-params
	$(VENV)/bin/python -m pipeline.experiments.repro retrieve evaluate_strategyqa_qa

## quail       the QuAIL track alone: baselines, four multiple-choice models, difficulty (about 21 min)
quail: setup check-params
	$(VENV)/bin/python -m pipeline.experiments.repro quail_baselines evaluate_quail_mc difficulty

# real training budgets on one GPU, as one DVC experiment (infra/training/gpu-profile.yaml; docs/going-live.md)
## repro-gpu   the GPU training budgets as one DVC experiment, on a machine with a GPU (docs/going-live.md)
repro-gpu: setup check-params
	$(VENV)/bin/python -m pipeline.experiments.profile infra/training/gpu-profile.yaml --name gpu-profile

# an offline GPU node (no package index, no internet; docs/going-live.md): pack what the training
# stages read into gpu-bundle/ (git-ignored, at most 64 MiB), run `python3 -m pipeline.offline.node --out OUT`
# inside it on the node, then bring OUT back: make gpu-import DIR=OUT [NAME=h100]
GPU_PROFILE ?= infra/training/gpu-profile.yaml
NODE_PYTHON ?= 3.12
## gpu-bundle  pack what the training stages read for an offline GPU node (NODE_PYTHON=3.12; needs the data stages)
gpu-bundle: setup
	$(VENV)/bin/python -m pipeline.offline.bundle --out gpu-bundle --profile $(GPU_PROFILE) --python-version $(NODE_PYTHON)

## gpu-import  bring an offline node's results back as a git branch: make gpu-import DIR=OUT [NAME=h100]
gpu-import: setup
	@test -n "$(DIR)" || { echo "usage: make gpu-import DIR=<the node's --out folder> [NAME=<branch gpu/NAME>]"; exit 2; }
	$(VENV)/bin/python -m pipeline.offline.importer "$(DIR)" $(if $(NAME),--name "$(NAME)",)

# the way back after `dvc exp run` (or one that failed on a bad -S value): params.yaml, dvc.lock and the outputs
# git keeps (metrics, reports, plots, curves: `cache: false` in dvc.yaml) as committed, every cached output as
# dvc.lock records it (outputs this machine never made stay missing: `dvc pull` them)
## reset       params.yaml, dvc.lock and the outputs as committed: the way back after an experiment
reset:
	git ls-files -z -- params.yaml dvc.lock dvclive metrics reports plots | xargs -0 git checkout --
	$(VENV)/bin/dvc checkout --force --allow-missing --quiet
	@$(VENV)/bin/python -m pipeline.experiments.reset_summary

# the outputs dvc.lock records as a folder to serve read-only over HTTP: a DVC remote a stranger can pull
## publish     the outputs as a read-only DVC remote folder: make publish DIR=<folder>
publish: setup
	@test -n "$(DIR)" || { echo "usage: make publish DIR=<folder to serve over HTTP> [STAGES=\"stage ...\"]"; exit 2; }
	$(VENV)/bin/python -m pipeline.experiments.publish "$(DIR)" $(STAGES)

# two pytest-xdist workers, a test file each at a time, slowest files first (tests/conftest.py): most slow tests
# wait on servers and subprocesses, so two cores run two of them (TEST_WORKERS=0: one process, no workers)
TEST_WORKERS ?= 2
# (--no-loadscope-reorder: xdist otherwise reorders the files by their number of tests, and the one-test smoke run
# of 11 minutes started near the end)
XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)
## test        the whole test suite on two workers (about 37 min; README, Testing)
test: setup
	$(VENV)/bin/python -m pytest $(XDIST) $(PYTEST_ARGS)

# the whole suite, its per-test seconds written to benchmarks/results/test_durations.json (benchmarks/test_durations.py)
test-durations: setup
	QA_PIPELINE_TEST_DURATIONS=$(CURDIR)/benchmarks/results/test_durations.json $(VENV)/bin/python -m pytest $(XDIST) $(PYTEST_ARGS)

# the edit loop: the suite without the tests marked slow
## test-fast   the suite without the tests marked slow: the edit loop (about 5 min)
test-fast: setup
	$(VENV)/bin/python -m pytest -m "not slow" $(PYTEST_ARGS)

## serve       the Prefect UI and the scheduled rebuild (NOTIFY_URL=<webhook>: a message on a failure or a moved figure)
serve: setup check-params
	$(VENV)/bin/python -m flows.serve

## plots       render every plot as HTML, offline (dvc plots show)
plots: setup
	$(VENV)/bin/dvc plots show

# the headline figures, one table per track (120 columns): what dvc metrics show holds, rounded for reading
## results     the headline figures, one table per track, from the metrics files
results: setup
	$(VENV)/bin/python -m pipeline.experiments.metrics_table

# experiments side by side: one column per experiment, one row per param or headline figure that differs
# (pipeline/experiments/table.py); fits 160 columns where `dvc exp show` names every column by its full path
## exps        experiments side by side: each param and headline figure that differs
exps:
	$(VENV)/bin/python -m pipeline.experiments.table


clean-envs:
	rm -rf $(VENV) $(VENV_PYWB)

# PyTorch internals course: every workflow is a target. `make help` lists them.
# Targets are thin: the logic lives in `python -m autograder ...`.

SHELL := /bin/bash
PYTHON3 ?= python3
# TORCH=<version> builds and uses a second venv with that torch (compatibility runs).
TORCH ?=
VENV ?= $(if $(TORCH),.venv-torch$(TORCH),.venv)
PY := $(VENV)/bin/python
# DEVICE=cuda runs every notebook with its DEVICE parameter set to cuda.
DEVICE ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
LAB ?=
SUBMISSIONS ?=
OUT ?=
PORT ?= 8888

export JOBS
# The venv's scripts (jupyter, nbgrader's alembic) come first for every target.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export COURSE_DEVICE := $(DEVICE)

.DEFAULT_GOAL := help

.PHONY: help setup sandbox-deps lab test lint release solutions quality grade demo student-dist clean-notebooks clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | awk -F'\t' '{printf "  make %-16s %s\n", $$1, $$2}'
	@echo "  variables: TORCH=<version> DEVICE=cpu|cuda JOBS=<n> LAB=<lab-id> SUBMISSIONS=<dir> OUT=<dir>"

setup: ## build .venv/ once (rebuilt when requirements.txt changes) and register its kernel
	@$(PYTHON3) -m autograder.venv --venv $(VENV) --requirements requirements.txt --root . $(if $(TORCH),--torch $(TORCH))

sandbox-deps: ## install bubblewrap (the grading sandbox) when missing; needs root, else says how
	@command -v bwrap >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing bubblewrap (grading sandbox)"; apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else echo "bubblewrap missing: run 'sudo apt-get install bubblewrap' (grading refuses to run without it)"; fi; }

lab: setup ## start JupyterLab on the course (prints the URL; works as root)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" --port=$(PORT) \
	  $(if $(filter 0,$(shell id -u)),--allow-root) \
	  $(if $(or $(DISPLAY),$(filter Darwin,$(shell uname))),,--no-browser)

test: setup sandbox-deps ## the whole suite: lint, lab quality, course notebooks, grading, student tree
	@if [ "$(DEVICE)" = "cuda" ]; then $(PY) -c "import torch,sys; torch.cuda.is_available() or sys.exit('make test DEVICE=cuda needs a CUDA GPU: torch.cuda.is_available() is False on this machine (torch ' + torch.__version__ + '). Run it on a GPU runner; see README, \"GPU runs\".')"; fi
	$(PY) -m pytest tests

lint: setup ## notebooks follow the lab contract; ruff on Python files
	$(PY) -m autograder lint

release: setup ## regenerate labs/ (student notebooks) from solutions/ with nbgrader
	$(PY) -m autograder release $(LAB)

solutions: setup ## run every solution notebook with papermill into build/executed/ (DEVICE=...)
	$(PY) -m autograder solutions $(LAB)

quality: setup ## the lab-quality table alone (solution full, blank 0, mutants caught, labs/ in sync)
	$(PY) -m autograder quality $(LAB)

grade: setup sandbox-deps ## grade hand-ins: make grade LAB=<lab-id> [SUBMISSIONS=<dir>] [OUT=<dir>]
	@test -n "$(LAB)" || { echo "usage: make grade LAB=<lab-id> [SUBMISSIONS=<dir>] [OUT=<dir>]"; exit 2; }
	$(PY) -m autograder grade --lab $(LAB) $(if $(SUBMISSIONS),--submissions "$(SUBMISSIONS)") $(if $(OUT),--out "$(OUT)") $(if $(INSECURE),--insecure)

demo: setup ## write the demo class (a few generated hand-ins per lab) to build/demo/
	$(PY) -m autograder demo

student-dist: setup ## write the learners' tree (no answers, no hidden tests) to build/student/
	$(PY) -m autograder student-dist

clean-notebooks: setup ## strip outputs and execution counts from every committed notebook
	$(PY) -m autograder clean-notebooks

clean: ## remove build/ (keeps the venv)
	rm -rf build

# PyTorch internals course: every workflow is a target. `make help` lists them.
# Targets are thin: grading lives in `python -m autograder grade`, the rest in `python -m coursetools ...`.

SHELL := /bin/bash
PYTHON3 ?= python3
# TORCH=<version> builds and uses a second venv with that torch (compatibility runs).
TORCH ?=
VENV ?= $(if $(TORCH),.venv-torch$(TORCH),.venv)
PY := $(VENV)/bin/python
# DEVICE=cuda runs every notebook with its DEVICE parameter set to cuda.
DEVICE ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# make test runs the suite's files on this many pytest workers (pytest-xdist); 1 runs them in one process
TEST_WORKERS ?= 2
CLASSES ?= 8 64
LAB ?=
SUBMISSIONS ?=
OUT ?=
ROSTER ?=
# COURSE=<dir>: the nbgrader course (gradebook, submitted/, autograded/) make grade uses; default build/course
COURSE ?=
FORCE ?=
PORT ?= 8888
EXCHANGE_OPTIONS = $(if $(EXCHANGE_ROOT),--exchange-root "$(EXCHANGE_ROOT)") $(if $(COURSE_ID),--course-id "$(COURSE_ID)")
# `make lab` opens on the course's landing page, with JupyterLab's pop-ups a course does not need turned off
# (news, update checks) by an overrides.json it writes into the venv. LAB_ARGS: extra `jupyter lab` options.
LANDING := course/START-HERE.ipynb
LAB_OVERRIDES := {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}
LAB_ARGS ?=
NO_BROWSER ?= $(if $(or $(DISPLAY),$(filter Darwin,$(shell uname))),,1)
# The browser test drives Debian's Chromium headless (no browser download at run time).
CHROMIUM ?= /usr/bin/chromium

export JOBS
# The venv's scripts (jupyter, nbgrader's alembic) come first for every target.
export PATH := $(abspath $(VENV))/bin:$(PATH)
export COURSE_DEVICE := $(DEVICE)

.DEFAULT_GOAL := help

.PHONY: help setup sandbox-deps browser-deps lab test lint release solutions quality grade demo student-dist \
  screenshots clean-notebooks clean gpu-check export release-feedback image \
  gradescope-bundle lock

# The variables a person sets on the command line, one `#:` line each (make help prints them; a test checks
# that every variable a recipe reads is here):
#: LAB=<lab-id>            the lab a grading, release or quality target works on (lab01-strides, ...)
#: SUBMISSIONS=<dir|zip|exchange>  make grade: a folder of <id>/<lab>.ipynb, an LMS zip, or the nbgrader exchange
#: OUT=<dir>               where a grade run writes (default build/grades/<lab>)
#: COURSE=<dir>            the nbgrader course (gradebook, submitted/, autograded/); default build/course
#: ROSTER=<csv>            students.csv (id, first_name, last_name, email); default grading.toml's
#: JOBS=<n>                hand-ins (or quality runs) at a time; default: the number of cores
#: TEST_WORKERS=<n>        make test: pytest workers, each taking whole test files (default 2; 1: one process)
#: FORCE=1                 make grade: run every hand-in again (stored runs are reused otherwise)
#: STUDENT=<id>[,<id>]     make grade: run these learners again, reuse everyone else's stored run
#: INSECURE=1              make grade: no sandbox (never for real hand-ins); gradescope-bundle: trust its container
#: EXCHANGE_ROOT=<dir>     make grade SUBMISSIONS=exchange / release-feedback: nbgrader's exchange folder
#: COURSE_ID=<id>          the course id in that exchange
#: FORMAT=csv|canvas|gradescope  make export: the LMS file to write
#: CANVAS_COLUMN="<name> (<id>)" make export FORMAT=canvas: an existing Canvas assignment column
#: DEVICE=cpu|cuda         the DEVICE parameter every notebook runs with
#: TORCH=<version>         build and use a second venv with this torch (compatibility runs)
#: VENV=<dir>              the venv to use (default .venv)
#: PYTHON3=<python>        the interpreter that builds the venv (default python3)
#: WEEKS=1-3|1,2,5         make student-dist: release these weeks only
#: CLASSES="8 64"          make bench-grade: the class sizes to time
#: PORT=<n>                make lab: JupyterLab's port (default 8888)
#: LAB_ARGS=<options>      make lab: extra `jupyter lab` options
#: NO_BROWSER=1            make lab: do not open a browser (default where there is no display)
#: CHROMIUM=<path>         the browser test's Chromium (default /usr/bin/chromium)
help: ## list the targets and the variables they read
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | awk -F'\t' '{printf "  make %-16s %s\n", $$1, $$2}'
	@echo "variables:"
	@grep -E '^#: ' $(MAKEFILE_LIST) | sed -E 's/^#: /  /'

setup: ## build .venv/ once (rebuilt when requirements.txt changes) and register its kernel
	@$(PYTHON3) -m coursetools.venv --venv $(VENV) --requirements requirements.txt --root . $(if $(TORCH),--torch $(TORCH))

sandbox-deps: ## install bubblewrap (the grading sandbox) and g++/ninja (lab 14) when missing; needs root, else says how
	@command -v bwrap >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing bubblewrap (grading sandbox)"; apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else echo "bubblewrap missing: run 'sudo apt-get install bubblewrap' (grading refuses to run without it)"; fi; }
	@# lab 14 compiles C++ operators (g++, ninja) and reads the libraries' symbols (nm, c++filt, strings: binutils)
	@{ command -v g++ && command -v ninja && command -v nm && command -v strings; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing g++, ninja and binutils (lab 14's C++)"; apt-get update -qq && apt-get install -y -qq g++ ninja-build binutils; \
	  else echo "g++/ninja/binutils missing: run 'sudo apt-get install g++ ninja-build binutils' (lab 14 needs them)"; fi; }

browser-deps: ## install Chromium (the browser test drives it headless) when missing; needs root, else says how
	@test -x $(CHROMIUM) || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium (browser test)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "chromium missing: run 'sudo apt-get install chromium' (the browser test fails without it)"; fi; }

lab: setup ## start JupyterLab on the course's landing page (prints the URL; works as root)
	@mkdir -p $(VENV)/share/jupyter/lab/settings && echo '$(LAB_OVERRIDES)' > $(VENV)/share/jupyter/lab/settings/overrides.json
	@# the formgrader's gradebook (nbgrader_config.py) lives in build/course/: SQLite cannot create the folder
	@mkdir -p build/course
	$(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" --port=$(PORT) --LabApp.default_url=/lab/tree/$(LANDING) \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(if $(NO_BROWSER),--no-browser) $(LAB_ARGS)

test: setup sandbox-deps browser-deps ## the whole suite: lint, lab quality, course notebooks, grading, student tree
	@if [ "$(DEVICE)" = "cuda" ]; then $(PY) -c "import torch,sys; torch.cuda.is_available() or sys.exit('make test DEVICE=cuda needs a CUDA GPU: torch.cuda.is_available() is False on this machine (torch ' + torch.__version__ + '). Run it on a GPU runner; see README, \"GPU runs\".')"; fi
	$(PY) -m pytest tests --durations=15 --durations-min=20 $(if $(filter-out 0 1,$(TEST_WORKERS)),--numprocesses $(TEST_WORKERS) --dist loadfile)

lock: ## rewrite requirements.lock (every package but torch, with hashes) after editing requirements.txt
	$(PYTHON3) -m venv .venv-lock && .venv-lock/bin/pip install -q pip-tools==7.6.2
	.venv-lock/bin/pip-compile -q --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
	  --no-emit-find-links -o build/requirements.compiled requirements.txt
	$(PYTHON3) -m coursetools.venv --finish-lock build/requirements.compiled --requirements requirements.txt
	$(PYTHON3) -m coursetools.envfiles

lint: setup ## notebooks follow the lab contract; ruff on Python files
	$(PY) -m coursetools lint

release: setup ## regenerate labs/ (student notebooks) from solutions/ with nbgrader
	$(PY) -m coursetools release $(LAB)

solutions: setup ## run every solution notebook with papermill into build/executed/ (DEVICE=...)
	$(PY) -m coursetools solutions $(LAB)

quality: setup ## the lab-quality table alone (solution full, blank 0, mutants caught, labs/ in sync)
	$(PY) -m coursetools quality $(LAB)

grade: setup sandbox-deps ## grade hand-ins: make grade LAB=<lab-id> [SUBMISSIONS=<dir|zip|exchange>] [OUT=<dir>] [JOBS=<n>] [FORCE=1]
	@test -n "$(LAB)" || { echo "usage: make grade LAB=<lab-id> [SUBMISSIONS=<dir|zip|exchange>] [OUT=<dir>] [JOBS=<n>] [FORCE=1] [ROSTER=<csv>] [COURSE=<dir>]"; exit 2; }
	$(PY) -m autograder grade --lab $(LAB) --jobs $(JOBS) $(if $(SUBMISSIONS),--submissions "$(SUBMISSIONS)") $(if $(OUT),--out "$(OUT)") $(if $(COURSE),--course "$(COURSE)") $(if $(ROSTER),--roster "$(ROSTER)") $(if $(FORCE),--force) $(if $(STUDENT),--student "$(STUDENT)") $(if $(INSECURE),--insecure) $(EXCHANGE_OPTIONS)

gpu-check: ## on a CUDA machine: run every solution's cells with DEVICE=cuda in its own python3 (no .venv); LAB=<id> for one
	$(PYTHON3) -m coursetools.gpu_run $(LAB)

release-feedback: setup ## after make grade (and formgrader): make release-feedback LAB=<lab-id> [OUT=<dir>]: pages, zips, the exchange
	@test -n "$(LAB)" || { echo "usage: make release-feedback LAB=<lab-id> [OUT=<dir>] [COURSE=<dir>]"; exit 2; }
	$(PY) -m autograder release-feedback --lab $(LAB) $(if $(OUT),--out "$(OUT)") $(if $(COURSE),--course "$(COURSE)") $(EXCHANGE_OPTIONS)

export: setup ## after make grade: make export LAB=<lab-id> FORMAT=csv|canvas|gradescope [OUT=<dir>] (LMS imports)
	@test -n "$(LAB)" -a -n "$(FORMAT)" || { echo "usage: make export LAB=<lab-id> FORMAT=csv|canvas|gradescope [OUT=<dir>] [COURSE=<dir>]"; exit 2; }
	$(PY) -m autograder export --lab $(LAB) --format $(FORMAT) $(if $(OUT),--out "$(OUT)") $(if $(COURSE),--course "$(COURSE)") $(if $(CANVAS_COLUMN),--canvas-column "$(CANVAS_COLUMN)")

gradescope-bundle: setup ## build/gradescope/<lab>.zip: this course's grader as a Gradescope autograder (LAB=<lab-id>)
	@test -n "$(LAB)" || { echo "usage: make gradescope-bundle LAB=<lab-id>"; exit 2; }
	$(PY) -m autograder gradescope-bundle --lab $(LAB) $(if $(INSECURE),--trust-container)

bench-grade: setup sandbox-deps ## time classes of 8 and 64 lab01 hand-ins: serial nbgrader vs make grade end to end, the reference built in the run (CLASSES="8 64")
	$(PY) -m coursetools bench-grade --jobs $(JOBS) --classes $(CLASSES)

demo: setup ## write the demo class (a few generated hand-ins per lab) to build/demo/
	$(PY) -m coursetools demo

student-dist: setup ## write the learners' tree (no answers, no hidden tests) to build/student/; WEEKS=1-3 releases those weeks
	$(PY) -m coursetools student-dist $(if $(WEEKS),--weeks "$(WEEKS)")

image: student-dist ## build and smoke-test the learners' container image (docker/Dockerfile; needs Docker or Podman)
	$(PY) -m coursetools image

screenshots: setup browser-deps ## rerun the browser test and copy the README's screenshots into docs/images/
	$(PY) -m pytest tests/test_browser.py -x -q
	@mkdir -p docs/images
	cp build/browser/screenshots/01-landing-page.png docs/images/landing-page.png
	cp build/browser/screenshots/04-validate-untouched-lab.png docs/images/validate.png

clean-notebooks: setup ## strip outputs and execution counts from every committed notebook
	$(PY) -m coursetools clean-notebooks

clean: ## remove build/ (keeps the venv)
	rm -rf build

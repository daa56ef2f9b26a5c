# minigraph — the command a learner needs, and the one a contributor needs:
#   make lab     set up .venv (first run only), then JupyterLab on the course, first chapter open
#   make test    the same set-up (+ test tools), then every test and every notebook
#
# Other targets: notebooks (re-execute chapters/ and solutions/ in place, storing fresh
# outputs), exercises (generate exercises/ from solutions/), site (the course website in
# build/site/, from the stored outputs), preview (the same, to read locally, linking no host),
# autograder (Gradescope's zip), release (build/release/: the student edition, without
# solutions or reference answers), publish (set where the course lives: course.toml), bench,
# clean, help.
#
# Variables you can override:  make lab LAB_ARGS="--no-browser --port=8899"
#   PYTHON        interpreter that creates the venv (default python3, must be >= 3.10)
#   VENV          where the venv lives (default .venv)
#   LAB_ARGS      extra arguments for `jupyter lab` (port, token, --no-browser, ...)
#   LAB_NOTEBOOK  the notebook JupyterLab opens (default chapters/00_setup_check.ipynb)
#   PYTEST_ARGS   extra arguments for every pytest run of `make test` (e.g. -x, -k NAME)
#   NOTEBOOKS     which notebooks `make notebooks` re-executes (default: chapters/ and solutions/)
#   CHAPTER       the chapter `make autograder` grades (default 00)
#   REPOSITORY    owner/name for `make publish` (GitHub; written once, into course.toml)

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
VENV_ABS := $(abspath $(VENV))
PY := $(VENV_ABS)/bin/python

# The venv's bin/ comes first for every recipe: jupyter, pytest and a venv-local `dot`
# (the graphviz-pure fallback of tools/ensure_dot.sh) are found there, by the recipes and
# by the kernels they start.
export PATH := $(VENV_ABS)/bin:$(PATH)

STAMP := $(VENV)/.installed
STAMP_DEV := $(VENV)/.installed-dev
STAMP_SITE := $(VENV)/.installed-site
SITE := build/site

LAB_ARGS ?=
LAB_NOTEBOOK ?= chapters/00_setup_check.ipynb
# Jupyter refuses to start as root unless told to (containers, CI, Binder-like machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# Notebooks whose outputs are the reference (strict nbval) and those that are only run (lax).
STRICT_DIRS := $(wildcard chapters solutions)
LAX_DIRS := $(wildcard exercises)
COURSE_NOTEBOOKS = $(wildcard chapters/*.ipynb solutions/*.ipynb exercises/*.ipynb)
NOTEBOOKS ?= $(wildcard chapters/*.ipynb solutions/*.ipynb)

PYTEST_ARGS ?=
XDIST := -n 2 --dist loadscope
# A kernel that dies while starting is started again (tests/nbval_kernels.py). A cell that
# runs 120 s has hung (the longest takes about 20 s): it is interrupted and fails, where nbval's
# own limit would wait 2,000 s per cell.
NBVAL_KERNELS := -p tests.nbval_kernels --nbval-cell-timeout=120
NBVAL_STRICT := --nbval --nbval-current-env $(NBVAL_KERNELS) --nbval-sanitize-with tests/nbval_sanitize.cfg
NBVAL_LAX := --nbval-lax --nbval-current-env $(NBVAL_KERNELS)
# The strict notebooks run twice: as this machine computes, and then as another one does
# (tools/other_machine.py: another BLAS kernel, numpy one SIMD level down, another number of
# BLAS threads), so that a stored digit only this machine makes fails here, not on a learner's.
REPORTS := build/test-reports
# each notebook's kernel CPU time, written by tests/nbval_kernels.py for tools/notebook_times.py
CPU_TIMES := --notebook-cpu-times=$(REPORTS)

CHAPTER ?= 00
AUTOGRADER := build/autograder
RELEASE := build/release

.PHONY: help lab test attack notebooks exercises site preview publish autograder release bench clean setup setup-dev dot bwrap trust warm

help:
	@echo "make lab        set up .venv (first time) and open JupyterLab on chapters/"
	@echo "make test       set up .venv with test tools and run every test and notebook"
	@echo "make notebooks  re-execute chapters/ and solutions/ in place (fresh stored outputs)"
	@echo "make exercises  generate exercises/ from solutions/"
	@echo "make site       build/site/: the course website, from the stored outputs (nothing executed)"
	@echo "make preview    the same site, to read on your machine before the course is published"
	@echo "make publish REPOSITORY=owner/name   where the course lives: README, site, Binder, Classroom"
	@echo "make autograder build/autograder.zip for Gradescope (CHAPTER=NN, default 00)"
	@echo "make attack     the slow part of the grader's attack run (left out of make test)"
	@echo "make release    build/release/: the student edition (no solutions, no reference answers)"
	@echo "make bench      run bench/*.py"
	@echo "make labextension  rebuild minigraph/labextension from jupyter/widget-labels (needs node and npm)"
	@echo "make clean      remove .venv and caches (never notebooks)"

# ---------------------------------------------------------------- set-up ----------------

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "minigraph needs Python >= 3.10; try: make lab PYTHON=python3.11"; exit 1; }
	@echo "Creating the virtual environment $(VENV)..."
	@$(PYTHON) -m venv $(VENV)

# Reinstall only when pyproject.toml changes: a second `make lab` starts in seconds.
# tools/pip_progress.py prints a line of progress now and then, and pip's output only if it fails.
PIP_INSTALL := $(PY) tools/pip_progress.py $(VENV)/pip-install.log

# An editable install leaves out the package's data files: minigraph's JupyterLab extension
# (minigraph/labextension, built from jupyter/widget-labels) is linked into the venv by hand.
LINK_LABEXTENSION := $(PY) -m jupyter labextension develop --overwrite . > $(VENV)/labextension.log 2>&1 \
	|| { cat $(VENV)/labextension.log; exit 1; }

$(STAMP): pyproject.toml | $(PY)
	@echo "Installing minigraph and its dependencies into $(VENV) (a few minutes the first time)..."
	@$(PIP_INSTALL) -e .
	@$(LINK_LABEXTENSION)
	@touch $@

$(STAMP_SITE): pyproject.toml | $(PY)
	@echo "Installing minigraph with the site's tools ([site]: Sphinx, myst-nb) into $(VENV)..."
	@$(PIP_INSTALL) -e '.[site]'
	@$(LINK_LABEXTENSION)
	@touch $(STAMP) $@

$(STAMP_DEV): pyproject.toml | $(PY)
	@echo "Installing minigraph (editable) with its [dev] test tools and [torch] into $(VENV)..."
	@$(PIP_INSTALL) -e '.[dev,torch]'
	@$(LINK_LABEXTENSION)
	@touch $(STAMP) $(STAMP_SITE) $@

# Says something only when it had to install `dot` (or could not).
dot: | $(PY)
	@out="$$(bash tools/ensure_dot.sh $(VENV))"; case "$$out" in "dot: using "*) ;; *) echo "$$out";; esac

# The batch grader's sandbox (minigraph/grading/batch/sandbox.py); only a warning if it cannot be had.
bwrap:
	@bash tools/ensure_bwrap.sh

# Matplotlib builds its font cache on first import and says so on stderr; do it here so
# the message never lands in a notebook's outputs (nbval would see an extra stream).
warm: | $(PY)
	@$(PY) -c 'import matplotlib.font_manager' 2>/dev/null || true

# The sandbox is the grader's (the tests grade hostile notebooks); `make lab` needs none.
setup: $(STAMP) dot warm

setup-dev: $(STAMP_DEV) dot bwrap warm

# Untrusted notebooks open with their stored SVG and widgets shown as plain text; the
# course's own notebooks are trusted so they open as they were saved. Only the notebooks
# changed since the last time are trusted again: the stamp $(STAMP_TRUST) remembers when, and
# in which signature database (Jupyter's data dir), so another database gets all of them.
STAMP_TRUST := $(VENV)/.trusted

trust: | $(STAMP)
	@db="$$(jupyter --data-dir)/nbsignatures.db"; \
	if [ -f "$$db" ] && [ "$$(cat $(STAMP_TRUST) 2>/dev/null)" = "$$db" ]; then \
		set -- $$(find $(COURSE_NOTEBOOKS) -newer $(STAMP_TRUST)); what="the $$# notebook(s) changed since the last start"; \
	else set -- $(COURSE_NOTEBOOKS); what="the course's $$# notebooks (the first time only)"; fi; \
	if [ $$# -gt 0 ]; then echo "Trusting $$what, so that their drawings and widgets show..."; \
		out="$$(jupyter trust "$$@" 2>&1)" || { echo "$$out"; exit 1; }; fi; \
	echo "$$db" > $(STAMP_TRUST)

# ---------------------------------------------------------------- the two commands ------

# JupyterLab logs only warnings and the address to open (its start-up chatter is INFO). The
# address it prints and the page the browser opens are LAB_NOTEBOOK's (default_url: the
# positional path only redirected the browser, and the printed address opened the Launcher).
lab: setup trust
	@echo "Starting JupyterLab on $(LAB_NOTEBOOK): if no browser opens, open the address below. Ctrl-C stops it."
	@exec jupyter lab --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url="/lab/tree/$(LAB_NOTEBOOK)" \
		--ServerApp.log_level=WARN --LabApp.log_level=WARN \
		$(ALLOW_ROOT) $(LAB_ARGS)

# $(call run_pytest,NAME,FOLDERS,FLAGS[,ENV]): one pytest run over FOLDERS (skipped if none exist),
# with ENV ("env A=1 B=2 ", or nothing) before it.
# Exit code 5 means "collected nothing" (a folder with no notebooks yet): counted as
# success. Any other non-zero code is recorded, the remaining runs still go, and the
# summary at the end fails.
define run_pytest
	@$(if $(strip $(2)),\
	echo "== $(4)pytest $(3) $(2)"; \
	rc=0; $(4)$(PY) -m pytest $(3) --junitxml=$(REPORTS)/$(1).xml $(PYTEST_ARGS) $(2) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "== $(1): nothing to collect in $(2) yet (pytest exit 5): ok"; \
	elif [ $$rc -ne 0 ]; then echo "$(1): pytest exited $$rc" >> $(REPORTS)/failed; fi,\
	echo "== $(1): no folder to test yet")
endef

test: setup-dev
	@rm -rf $(REPORTS) && mkdir -p $(REPORTS)
	$(call run_pytest,unit,tests,$(XDIST))
	$(call run_pytest,notebooks,$(STRICT_DIRS),$(XDIST) $(NBVAL_STRICT))
	@$(PY) tools/other_machine.py > $(REPORTS)/other-machine.env || \
		echo "tools/other_machine.py: no other machine to run the notebooks as" >> $(REPORTS)/failed
	$(call run_pytest,notebooks-other-machine,$(STRICT_DIRS),$(XDIST) $(NBVAL_STRICT) $(CPU_TIMES)/notebooks-cpu.jsonl,env $$(cat $(REPORTS)/other-machine.env) )
	$(call run_pytest,exercises,$(LAX_DIRS),$(XDIST) $(NBVAL_LAX) $(CPU_TIMES)/exercises-cpu.jsonl,env OPENBLAS_NUM_THREADS=1 )
	@$(PY) tools/notebook_times.py $(REPORTS)/notebooks-cpu.jsonl $(REPORTS)/exercises-cpu.jsonl || \
		echo "notebook times: a notebook is over twice its budget" >> $(REPORTS)/failed
	@rc=0; $(PY) tools/test_summary.py $(REPORTS)/*.xml || rc=$$?; \
	if [ -f $(REPORTS)/failed ]; then cat $(REPORTS)/failed; exit 1; fi; exit $$rc

# ---------------------------------------------------------------- course upkeep ---------

# Re-execute in place, cwd = the notebook's folder, no timing metadata, widget state kept.
# One notebook: make notebooks NOTEBOOKS=chapters/00_setup_check.ipynb
notebooks: setup
	@for nb in $(NOTEBOOKS); do \
		echo "== executing $$nb"; \
		( cd "$$(dirname "$$nb")" && jupyter nbconvert --to notebook --execute --inplace \
			--log-level=WARN \
			--ExecutePreprocessor.kernel_name=python3 \
			--ExecutePreprocessor.timeout=600 \
			--ExecutePreprocessor.record_timing=False \
			"$$(basename "$$nb")" ); \
	done

exercises: setup
	$(PY) -m minigraph.grading.generate solutions exercises

# The course website, from chapters/ and exercises/ with their stored outputs (nothing is
# executed; widgets shown as pictures of their saved state): open build/site/index.html.
# Refuses (before installing anything) while course.toml's repository is the placeholder.
site: published-site $(STAMP_SITE)
	$(PY) tools/build_site.py $(SITE)

# The same site, for reading on your machine: its home page links no repository or Binder.
preview: $(STAMP_SITE)
	$(PY) tools/build_site.py --preview $(SITE)

# published-site, published-release: one line and a failure if the course has no home yet.
published-%:
	@$(PYTHON) tools/publish.py --check "make $*"

# Where the course is published, written once into course.toml and into the files that name it
# (README's badges and links, the Classroom workflow); the site takes it at build time.
publish:
	@$(if $(REPOSITORY),,echo "usage: make publish REPOSITORY=owner/name (the course's GitHub repository)"; exit 1)
	@$(PYTHON) tools/publish.py "$(REPOSITORY)"

# Gradescope's autograder zip: setup.sh and run_autograder at its root (tools/gradescope/),
# the chapter to grade, and the package (course/: no solutions, no notebooks).
autograder: setup
	@$(PY) -c 'import sys; from minigraph.grading.toolkit import registry; registry.exercises(sys.argv[1])' $(CHAPTER)
	rm -rf $(AUTOGRADER) $(AUTOGRADER).zip && mkdir -p $(AUTOGRADER)/course
	cp tools/gradescope/setup.sh tools/gradescope/run_autograder $(AUTOGRADER)/
	echo $(CHAPTER) > $(AUTOGRADER)/chapter
	cp -r pyproject.toml README.md minigraph $(AUTOGRADER)/course/
	find $(AUTOGRADER)/course -name __pycache__ -prune -exec rm -rf {} +
	cd $(AUTOGRADER) && $(PY) -m zipfile -c ../autograder.zip setup.sh run_autograder chapter course
	@echo "wrote $(AUTOGRADER).zip (chapter $(CHAPTER)): upload it as the assignment's autograder"

# The course as learners get it: chapters, exercises and the package without its reference
# answers (minigraph/grading/release.py says what check() can still judge there).
release: published-release setup
	$(PY) -m minigraph.grading.release $(RELEASE)

# the slow part of the grader's attack run (tests/fixtures/submissions-slow/), left out of `make test`
attack: setup-dev
	MINIGRAPH_ATTACK=1 $(PY) -m pytest tests/grading/test_batch_attack_slow.py -q

bench: setup
	@set -- bench/*.py; if [ ! -e "$$1" ]; then echo "no bench/*.py yet"; exit 0; fi; \
	for f in "$$@"; do echo "== $$f"; $(PY) "$$f"; done

# minigraph's JupyterLab extension, rebuilt from its source; the build is committed, so that
# nothing is built or downloaded when the course is installed
labextension: | $(PY)
	cd jupyter/widget-labels && npm install --no-audit --no-fund && \
		node node_modules/@jupyterlab/builder/lib/build-labextension.js \
		--core-path "$$($(PY) -c 'import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), "staging"))')" .

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis *.egg-info
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +

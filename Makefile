# Who picks the skill? — set-up and the course's main jobs. See README.md.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# What is installed in .venv, one marker file per set of extras (each redone when pyproject.toml changes).
COURSE_DEPS := $(VENV)/.installed-course
TEST_DEPS := $(VENV)/.installed-test
FUZZ_DEPS := $(VENV)/.installed-fuzz

.PHONY: setup setup-test course eval test lab bench fuzz clean

# What the course needs, and nothing more: .venv with the package, its `local` and `course` extras
# (offline backend, JupyterLab), and the local model, fetched once. No test tooling.
setup: $(COURSE_DEPS)
	$(PY) -m course_utils models fetch

# What the tests need on top (make test, CI): the `dev` and `fuzz` extras (pytest, hypothesis, Playwright,
# atheris), and Debian's chromium for the browser tests where it is missing (never fails without root).
setup-test: setup $(TEST_DEPS)
	bash scripts/ensure_chromium.sh

$(PY):
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(COURSE_DEPS): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[local,course]"
	touch $@

$(TEST_DEPS): pyproject.toml $(COURSE_DEPS)
	$(PY) -m pip install --quiet -e ".[local,course,dev,fuzz]"
	touch $@

$(FUZZ_DEPS): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[fuzz]"
	touch $@

# Execute every lesson headless into build/notebooks/ (figures in build/figures/), timing each one.
course: setup
	$(PY) -m course_utils run-notebooks notebooks --out build/notebooks

# The three selectors on both query sets, headless: reports, JSON and histograms in build/.
eval: setup
	$(PY) -m course_utils eval-trigger --selectors model,model-abstain,similarity,hybrid --queries data/trigger_eval.yaml --json build/eval_en.json --plot build/figures/eval_en.png
	$(PY) -m course_utils eval-trigger --selectors model,model-abstain,similarity,hybrid --queries data/trigger_eval_fr.yaml --json build/eval_fr.json --plot build/figures/eval_fr.png

# The whole suite, as CI runs it (.ci/run) from a clean clone: every tier (`-m ""` replaces the fast-tier
# selection pyproject.toml gives plain `pytest`), 1800 s per test unless a test says otherwise, then the linter.
test: setup-test
	$(PY) -m pytest -m "" --timeout=1800
	$(PY) -m ruff check .

lab: setup
	$(PY) -m jupyter lab notebooks

bench: setup
	$(PY) -m scripts.lab bench --json build/bench.json

# Fuzz the skill and query-set readers with atheris, FUZZ_SECONDS per target (no model needed).
FUZZ_SECONDS ?= 300
fuzz: $(FUZZ_DEPS)
	$(PY) -m scripts.lab fuzz all --seconds $(FUZZ_SECONDS)

clean:
	rm -rf build .pytest_cache

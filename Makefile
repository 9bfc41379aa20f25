# Who picks the skill? — set-up and the course's main jobs. See README.md.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: setup course eval test lab bench fuzz clean

# Create .venv, install the package with everything the course needs, fetch the local model once,
# and install Debian's chromium for the browser tests where it is missing (never fails without root).
setup: $(INSTALLED)
	$(PY) -m course_utils models fetch
	bash scripts/ensure_chromium.sh

$(INSTALLED): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed, found " + sys.version.split()[0]'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[local,course,dev,fuzz]"
	touch $@

# Execute every lesson headless into build/notebooks/ (figures in build/figures/), timing each one.
course: setup
	$(PY) -m course_utils run-notebooks notebooks --out build/notebooks

# The three selectors on both query sets, headless: reports, JSON and histograms in build/.
eval: setup
	$(PY) -m course_utils eval-trigger --selectors model,similarity,hybrid --queries data/trigger_eval.yaml --json build/eval_en.json --plot build/figures/eval_en.png
	$(PY) -m course_utils eval-trigger --selectors model,similarity,hybrid --queries data/trigger_eval_fr.yaml --json build/eval_fr.json --plot build/figures/eval_fr.png

test: setup
	$(PY) -m pytest

lab: setup
	$(PY) -m jupyter lab notebooks

bench: setup
	$(PY) -m course_utils bench --json build/bench.json

# Fuzz the skill and query-set readers with atheris, FUZZ_SECONDS per target (no model needed).
FUZZ_SECONDS ?= 300
fuzz: $(INSTALLED)
	$(PY) -m course_utils fuzz all --seconds $(FUZZ_SECONDS)

clean:
	rm -rf build .pytest_cache

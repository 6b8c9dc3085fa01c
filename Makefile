# `make test` and `make demo` work on a fresh clone: they create .venv when it
# is missing or older than requirements.txt.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-requirements
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: setup test demo benchmark clean

setup: $(STAMP)

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -n 2 $(PYTEST_ARGS)

demo: $(STAMP)
	$(PY) demo/run_demo.py

benchmark: $(STAMP)
	$(PY) benchmarks/tokenization_benchmark.py
	$(PY) benchmarks/model_benchmark.py
	$(PY) benchmarks/create_pretraining_data_benchmark.py
	$(PY) benchmarks/pretraining_step_benchmark.py

clean:
	rm -rf $(VENV) demo_output benchmark_output

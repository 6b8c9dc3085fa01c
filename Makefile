# `make test` and `make demo` work on a fresh clone: they create .venv when it
# is missing or older than requirements.txt, and build the Cython extension
# when it is missing or older than its source.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-requirements
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
CYTHON_SOURCES := pretraining_data/_mersenne_twister.pyx pretraining_data/_instance_kernels.pyx \
	pretraining_data/_example_encoding.pyx
CYTHON_HEADERS := pretraining_data/_mersenne_twister.pxd
EXTENSIONS_STAMP := $(VENV)/.built-extensions

.PHONY: setup test test-slurm chaos demo demo-papers benchmark bazel-check build-file clean

setup: $(STAMP) $(EXTENSIONS_STAMP)

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $(STAMP)

# In place, next to the sources; without them create_pretraining_data runs the
# same algorithm in pure Python (same output, slower).
$(EXTENSIONS_STAMP): $(STAMP) $(CYTHON_SOURCES) $(CYTHON_HEADERS)
	$(VENV)/bin/cythonize -i -3 -q $(CYTHON_SOURCES)
	touch $(EXTENSIONS_STAMP)

test: setup
	$(PY) -m pytest -n 2 --durations=15 $(PYTEST_ARGS)

# On a real Slurm (tests/slurm/): tools/local_slurm.sh installs Debian's slurmctld, slurmd and munge when
# missing (root) and runs slurmctld and slurmd on localhost; skipped, saying why, where it cannot.
test-slurm: setup
	$(PY) -m pytest -m slurm tests/slurm $(PYTEST_ARGS)

# The study engine killed with SIGKILL at hundreds of seeded random moments (tests/chaos/chaos_study.py;
# `make test` runs one cycle): every cycle must end as a run left alone. About an hour on 2 cores.
CHAOS_FLAGS ?= --cycles=60 --seed=1
chaos: setup
	$(PY) tests/chaos/chaos_study.py --work_dir=chaos_output --report=chaos_output/summary.md $(CHAOS_FLAGS)

# The demo needs no Cython extension (it runs no create_pretraining_data.py): set-up stays short.
# e.g. make demo DEMO_FLAGS=--dtype=float32
DEMO_FLAGS ?=
demo: $(STAMP)
	$(PY) demo/run_demo.py $(DEMO_FLAGS)

# Pre-training from scratch and Table 2B at tiny scale, offline (demo/papers_demo.py, ~5 min).
demo-papers: setup
	$(PY) demo/papers_demo.py $(DEMO_FLAGS)

# BUILD checked by Bazel, offline: every target loads, every file and dep
# resolves, and a few py_test targets run (tools/bazel_check.sh). Debian's
# Bazel 4 is installed when missing (root; ~20 s, 150 MB).
BAZEL_TESTS := //:pretraining_data_progress_test //:classifier_data_submission_test //:freezing_selectors_test

bazel-check: setup
	command -v bazel >/dev/null || { apt-get update -qq && apt-get install -y -qq bazel-bootstrap >/dev/null; }
	tools/bazel_check.sh --test $(BAZEL_TESTS)

# BUILD from the code's imports (tools/build_file.py; the standard library only, no set-up needed).
build-file:
	$(PYTHON) tools/build_file.py

# The peers it measures against (benchmarks/requirements.txt) are installed first; the runner writes
# each benchmark's figures to benchmarks/results/<benchmark>/<date>.md with the machine and date.
# The PyTorch peers run in an interpreter of your choice that has torch and transformers:
# make benchmark TORCH_PYTHON=/path/to/python
TORCH_PYTHON ?=
benchmark: setup
	$(PY) -m pip install -q -r benchmarks/requirements.txt
	$(PY) benchmarks/run_benchmarks.py $(if $(TORCH_PYTHON),--torch_python=$(TORCH_PYTHON))

clean:
	rm -rf $(VENV) demo_output benchmark_output chaos_output build pretraining_data/*.c pretraining_data/*.so

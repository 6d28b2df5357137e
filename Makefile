# The two entry points: `make demo` (the main job) and `make test`. Both install what they need, idempotently.
VENV    ?= .venv
PY      := $(VENV)/bin/python
SHARED  ?= ../shared/data
OUT     ?= demo-output
DEMO_ARGS ?=
PYTEST_ARGS ?=

# NLTK tagger data: the venv's own download if the downloader worked, else the shared copy
export NLTK_DATA := $(abspath $(VENV))/nltk_data:$(abspath $(SHARED))/nltk_data
export PYTHONPATH := $(CURDIR)

.PHONY: install demo test test-fast check fuzz docs bench bench-scale clean

install:
	@bash scripts/install.sh

# every part of train_scripts/demo/parts.py (translation on Multi30k, RoBERTa pretraining -> fine-tuning, German:
# Wordmap's question; DEMO_ARGS="--part translation" for one); every part's inputs are read from SHARED
# (--shared-data: each part declares its own, Part.shared_inputs; without Multi30k there the translation part
# downloads it or says how to get it) and checked before the first stage
demo: install
	$(PY) -m train_scripts.demo.main --shared-data $(SHARED) --output $(OUT) $(DEMO_ARGS)

# everything (CI), the linter first, the 20 slowest tests listed; test-fast: what is not marked slow (pyproject.toml).
# In TEST_JOBS processes (pytest-xdist, one file per process at a time: a module fixture is built once, the real
# SLURM tests run one after another); TEST_JOBS=0 runs them in this process
TEST_JOBS ?= 2
test: install
	$(PY) -m ruff check .
	$(PY) -m pytest -q -rs --durations=20 $(if $(filter-out 0,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile) $(PYTEST_ARGS) tests

# the loop to run per edit: the tests not marked slow (tests/conftest.py: SLOW_TESTS, and FAST_CASE for tests run
# with one case), in two processes (pytest-xdist; a file stays in one process, so a module fixture is built once);
# FAST_JOBS=0 runs them in this process
FAST_JOBS ?= 2
# the tests keep Python's bytecode caches (__pycache__/, ignored by git) even where the environment turns them off
# (PYTHONDONTWRITEBYTECODE): without them every run, and each of the ~300 commands the tests start, compiles this
# project's sources and pytest rewrites every test module again (16 s rather than 6 s to collect, per process)
test test-fast fuzz: export PYTHONDONTWRITEBYTECODE :=
test-fast: install
	$(PY) -m ruff check .
	$(PY) -m pytest -q -rs -m "not slow" --durations=10 $(if $(filter-out 0,$(FAST_JOBS)),-n $(FAST_JOBS) --dist loadfile) $(PYTEST_ARGS) tests

# lint + the fast tests: what to run before a commit
check: test-fast

# the property tests of tests/test_fuzz.py with a long, random budget (make test: fixed seed, small budget)
FUZZ_EXAMPLES ?= 2000
fuzz: install
	MORPHTOK_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -rs $(PYTEST_ARGS) tests/test_fuzz.py -k hypothesis

# the manual (docs/, mkdocs.yml) as a static site in site/; --strict: a broken link or a page left out of the nav fails
docs: install
	$(PY) -m mkdocs build --strict

# every benchmark, its output also written to bench/results/DATE-make-bench.md with the machine's load and versions
BENCH_OUT = bench/results/$(shell date +%Y-%m-%d-%H%M)-make-bench.md
bench: install
	@mkdir -p bench/results
	@{ echo "# make bench, $$(date '+%Y-%m-%d %H:%M %Z')"; echo; echo '```'; echo "load: $$(cat /proc/loadavg)"; \
	   echo "cpus: $$(nproc)"; $(PY) -c 'import platform, sentencepiece, torch; print("python", platform.python_version(), "| torch", torch.__version__, "| sentencepiece", sentencepiece.__version__)'; \
	   echo "commit: $$(git rev-parse --short HEAD 2>/dev/null)"; echo; \
	   for b in bench/scale.py bench/spaces.py bench/bite.py bench/flota.py bench/wordmap.py; do \
	     echo "## $$b"; $(PY) $$b 2>&1 || echo "($$b failed)"; echo; done; echo '```'; } | tee $(BENCH_OUT)
	@echo "written: $(BENCH_OUT)"

# how each step's cost grows with the corpus, every scheme (hours at the default 4M,16M,65M words, not CI):
# bench/results/DATE-scale-corpus.{md,json}; e.g. SCALE_ARGS="--sizes 20k,80k --vocab-size 1000" for a quick look
SCALE_ARGS ?=
bench-scale: install
	$(PY) bench/scale_corpus.py --data $(SHARED)/english_lm $(SCALE_ARGS)

clean:
	rm -rf $(OUT) .pytest_cache

# Folio: `make run` opens the app, `make test` runs the whole suite headless.
# Both create .venv on first use. llama-cpp-python is built from source once, portably, into a
# wheelhouse under the user's cache dir (see tools/llama_wheel.py) and installed from there.

PYTHON ?= python3
VENV := .venv
ifeq ($(OS),Windows_NT)
BIN := $(VENV)/Scripts
EXE := .exe
else
BIN := $(VENV)/bin
EXE :=
endif
APP_STAMP := $(VENV)/.folio-app
DEV_STAMP := $(VENV)/.folio-dev
EVAL_STAMP := $(VENV)/.folio-eval
# Benchmarks with the real 1.5B model (benchmarks/eval_model.py): `make eval`, not `make bench`.
EVAL_BENCHMARKS := $(wildcard benchmarks/bench_grounding.py benchmarks/bench_extraction_quality.py benchmarks/bench_speculative.py benchmarks/bench_compare_summary.py)
PYTEST := QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

.PHONY: run test test-slow reliability check bench eval bundle screenshots clean

$(BIN)/python$(EXE):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Folio needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)

# tools/llama_wheel.py prints only the wheel path on stdout (pip's log goes to stderr); a failed build
# stops here instead of handing pip an empty name.
$(APP_STAMP): $(BIN)/python$(EXE) pyproject.toml tools/llama_wheel.py
	$(BIN)/python -m pip install --quiet platformdirs
	wheel="$$($(BIN)/python tools/llama_wheel.py)" && $(BIN)/python -m pip install --quiet "$$wheel"
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): $(APP_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

$(EVAL_STAMP): $(DEV_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,eval]'
	$(BIN)/python benchmarks/eval_model.py >/dev/null
	touch $@

run: $(APP_STAMP)
	$(BIN)/folio gui

check: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

test: check
	$(PYTEST) -m "not slow" -n 2 --durations=40

# The one-folder app (dist/folio, or dist/Folio.app on macOS) from packaging/folio.spec.
bundle: $(DEV_STAMP)
	$(BIN)/python -m PyInstaller --noconfirm --clean --log-level WARN \
		--distpath dist --workpath build/pyinstaller packaging/folio.spec

# Slow tests start the bundle built just before (FOLIO_REQUIRE_BUNDLE: a missing bundle fails, not skips).
test-slow: bundle
	FOLIO_REQUIRE_BUNDLE=1 $(PYTEST) -m slow

# Runs the reliability tests (with the full kill -9 trials) and rewrites RELIABILITY.md from the run.
reliability: $(DEV_STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python tools/reliability_report.py --slow

bench: $(DEV_STAMP)
	for b in $(filter-out $(EVAL_BENCHMARKS),$(wildcard benchmarks/bench_*.py)); do $(BIN)/python $$b || exit 1; done

# Answer and extraction quality with the real Qwen2.5-Coder-1.5B (1.1 GB, installed only here).
eval: $(EVAL_STAMP)
	$(BIN)/python benchmarks/eval_model.py >/dev/null
	for b in $(EVAL_BENCHMARKS); do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist *.egg-info

# The laptop screen most lawyers have; the answers are the eval model's (hence its packages).
screenshots: $(EVAL_STAMP)
	xvfb-run -a -s "-screen 0 1366x768x24" $(BIN)/python tools/screenshots.py
	xvfb-run -a -s "-screen 0 1366x768x24" $(BIN)/python tools/screenshots_setup.py
	xvfb-run -a -s "-screen 0 1366x768x24" $(BIN)/python tools/screenshots_setup.py --scale 1.5

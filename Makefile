# make demo  - create/refresh .venv, install, run an offline end-to-end scenario
# make test  - create/refresh .venv, install, run ruff, mypy (strict) and pytest
# make bench - run the benchmarks (uses ../shared/corpus when present)
# make hardening - the hardening tests at full size (1 GiB bombs, 50 MB files, heavy
#                  fuzzing) with their measured figures, then the ledger load benchmark
# make chromium  - install Debian's chromium for the browser tests when it is missing
#                  and this machine allows it (root and apt-get); otherwise do nothing
# make pandoc    - the same for Debian's pandoc (the bibliography client tests)
# make pywb      - pywb 2.10 in its own virtualenv (.venv-pywb) for the WARC replay tests

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# pywb lives apart from .venv: it requires brotlipy, whose `brotli` module would shadow
# the Brotli package fetchledger decodes responses with (and old redis/fakeredis pins).
PYWB_VENV ?= .venv-pywb
PYWB_SPEC := 'pywb==2.10.*' 'webtest>=3,<4'

.PHONY: venv demo test lint typecheck pytest bench hardening docs clean chromium pandoc pywb

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples scripts

typecheck: $(STAMP)
	$(BIN)/mypy

# Two test processes: the suite mostly waits on one core (subprocesses, servers,
# sleeps), and two cut its time by a third on a 2-core machine. TEST_WORKERS=0 runs it in
# one process (pytest -p no:xdist for a debugger).
TEST_WORKERS ?= 2

pytest: $(STAMP) chromium pandoc pywb
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

# Quiet and idempotent: nothing happens when a Chromium is there (or named by
# FETCHLEDGER_CHROMIUM), or when this is not root on a Debian-like system.
chromium:
	@if [ -z "$$FETCHLEDGER_CHROMIUM" ] && [ ! -x /usr/lib/chromium/chromium ] \
	    && ! command -v chromium >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
	    && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: installing Debian's chromium for the browser tests"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get install -y -qq chromium >/dev/null 2>&1 \
	    || { apt-get update -qq >/dev/null 2>&1 \
	         && apt-get install -y -qq chromium >/dev/null 2>&1; }; } \
	  || echo "make: could not install chromium; the browser tests will say so"; \
	fi

pandoc:
	@if ! command -v pandoc >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
	    && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: installing Debian's pandoc for the bibliography tests"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get install -y -qq pandoc >/dev/null 2>&1 \
	    || { apt-get update -qq >/dev/null 2>&1 \
	         && apt-get install -y -qq pandoc >/dev/null 2>&1; }; } \
	  || echo "make: could not install pandoc; the pandoc tests will say so"; \
	fi

# Quiet and idempotent; a failed install leaves the pywb tests to say so (and to fail
# under FETCHLEDGER_TEST_CLIENTS=1).
pywb: $(PYWB_VENV)/.installed

$(PYWB_VENV)/.installed: Makefile
	@{ test -x $(PYWB_VENV)/bin/python || $(PYTHON) -m venv $(PYWB_VENV); } \
	  && $(PYWB_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	       $(PYWB_SPEC) >$(PYWB_VENV)/install.log 2>&1 \
	  && touch $@ \
	  || echo "make: could not install pywb (see $(PYWB_VENV)/install.log); the WARC replay tests will say so"

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

hardening: $(STAMP)
	$(BIN)/python benchmarks/hardening.py
	$(BIN)/python benchmarks/ledger_load.py

clean:
	rm -rf $(VENV) $(PYWB_VENV) .pytest_cache .mypy_cache .ruff_cache build src/*.egg-info

docs: $(STAMP)
	$(BIN)/python scripts/cli_reference.py

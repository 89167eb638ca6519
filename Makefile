# Two commands for a newcomer: `make book` and `make test`.
# Both create or refresh .venv from requirements.txt + `pip install -e .`;
# a second run skips what is already current.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
GDC    := $(PY) -m gdcourse
PROFILE ?= reader

export PYDEVD_DISABLE_FILE_VALIDATION := 1
export JUPYTER_PLATFORM_DIRS := 1
export HF_HUB_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: venv book test exercises notebooks clean help
.DEFAULT_GOAL := help

help:
	@echo "make book       set up .venv, execute the chapters, build _build/html"
	@echo "make test       set up .venv, run every check (pytest)"
	@echo "make exercises  regenerate exercises/ from solutions/ (nbgrader)"
	@echo "make notebooks  execute every notebook at CI parameters and time them"
	@echo "make clean      remove _build (keeps .venv)"

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# Execute the chapters (reader-sized by default; PROFILE=ci for the small run)
# and build the HTML from the executed copies with warnings as errors. Skipped
# when nothing the book depends on changed since the last build of that profile.
BOOK_SOURCES := $(shell find book gdcourse -type f -not -path '*/.*' -not -path '*/__pycache__/*') _config.yml _toc.yml
BOOK_STAMP   := _build/.book-$(PROFILE)

book: $(BOOK_STAMP)
	@echo "Book ($(PROFILE) parameters): open _build/html/index.html"

$(BOOK_STAMP): $(STAMP) $(BOOK_SOURCES)
	rm -f _build/.book-*
	$(GDC) book --profile $(PROFILE) --html-parent .
	touch $@

test: $(STAMP)
	$(PY) -m pytest

exercises: $(STAMP)
	$(GDC) release

notebooks: $(STAMP)
	$(GDC) run-notebooks --profile ci --out _build/executed-ci

clean:
	rm -rf _build

# The two set-up commands: `make run` (demo on embedded defaults) and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/assay_test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
TEST_BROKER_URL ?= redis://127.0.0.1:6379/1
# Two checkouts may run `make test` at once against one PostgreSQL and one Redis:
# each checkout's run creates its own test database and keeps its Redis keys (cache,
# LLM limits, Celery queues) under its own namespace, both named after a checksum of
# the checkout's path.
CHECKOUT_ID := $(shell printf '%s' '$(CURDIR)' | cksum | cut -d' ' -f1)
TEST_ENV = DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} \
	REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} \
	CELERY_BROKER_URL=$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)} \
	DATABASE_TEST_NAME=$${DATABASE_TEST_NAME:-test_assay_$(CHECKOUT_ID)} \
	REDIS_NAMESPACE=$${REDIS_NAMESPACE:-assay-test-$(CHECKOUT_ID)} \
	SECRET_KEY=test-only-secret-key ALLOWED_HOSTS=localhost,127.0.0.1,testserver DEBUG=0
# The suite runs in TEST_PROCESSES processes (pytest-xdist, up to one per core),
# each with its own test database and Redis namespace; 0 runs it in pytest's own
# process. The SQLite smoke subset runs in one. Work stealing, because
# pytest-django puts the transactional tests (browser, real workers: half the
# suite's time) last, and xdist's default hands them out in batches of dozens: one
# process ran its batch for minutes while the other stood idle.
TEST_PROCESSES ?= 2
SQLITE_TEST_ENV = DATABASE_URL=sqlite:///$(CURDIR)/var/smoke.sqlite3 REDIS_URL= \
	CELERY_BROKER_URL= SECRET_KEY=test-only-secret-key \
	ALLOWED_HOSTS=localhost,127.0.0.1,testserver DEBUG=0

.PHONY: run test install install-dev lint check-services browser latex gettext messages clean

# The interface catalogues (#30) are compiled here, never committed: a binary .mo
# cannot be merged, and one compiled by make is never older than its .po.
PO_FILES := $(wildcard locale/*/LC_MESSAGES/*.po)
MO_FILES := $(PO_FILES:.po=.mo)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Assay needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install messages
	@mkdir -p var
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py load_demo
	@echo "Assay on http://$(HOST):$(PORT)/ — Ctrl-C stops the web server and the worker."
	@trap 'kill 0' INT TERM EXIT; \
	DEBUG=1 $(BIN)/celery -A assay worker --loglevel=INFO --concurrency=2 & \
	DEBUG=1 $(BIN)/python manage.py runserver $(HOST):$(PORT) & \
	wait

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

check-services: install-dev
	@$(TEST_ENV) $(BIN)/python bin/check_services.py

browser:
	@command -v chromium >/dev/null || { echo "Installing Debian's chromium for browser tests"; \
		apt-get update -qq && apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; }
	@fc-list 2>/dev/null | grep -q "Noto Sans CJK" || { echo "Installing Noto CJK fonts \
		(they cover the Chinese, Cyrillic and Vietnamese item texts)"; \
		apt-get update -qq && apt-get install -y -qq fonts-noto-cjk >/dev/null; }

gettext:
	@command -v msgfmt >/dev/null || { echo "Installing gettext (msgfmt compiles the interface catalogues)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gettext >/dev/null; }

locale/%.mo: locale/%.po | gettext
	msgfmt --check-format -o $@ $<

messages: $(MO_FILES)

latex:
	@command -v pdflatex >/dev/null || { echo "Installing pdflatex (tests compile the LaTeX downloads)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		texlive-latex-base texlive-latex-recommended >/dev/null; }

test: install-dev lint browser latex messages check-services
	@mkdir -p var/static && rm -f var/smoke.sqlite3
	$(SQLITE_TEST_ENV) $(BIN)/python manage.py makemigrations --check --dry-run
	$(TEST_ENV) $(BIN)/pytest --numprocesses=$(TEST_PROCESSES) --dist=worksteal --durations=40
	$(SQLITE_TEST_ENV) $(BIN)/pytest -m smoke -p no:cacheprovider

clean:
	rm -rf var/broker var/smoke.sqlite3

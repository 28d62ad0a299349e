# The two commands a newcomer needs: `make lab` and `make test`.
# Both create .venv when it is missing and install what they need into it, pinned by constraints.txt,
# with uv (from PATH, else installed into .venv from PyPI; plain pip when that fails): mcplab/install.py,
# which is also `python -m mcplab setup` for machines without make. Both fetch the official schemas
# for the trace viewer's badges (`mcplab schemas`); offline that is one sentence, not a failure.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
NODE_DIR := .node
LAB_ARGS ?=
# The labs' language: `make lab LAB_LANG=zh` opens the Chinese edition (labs/zh-CN/). LANG is the
# locale variable every program reads (en_US.UTF-8 ...), so it is only taken as the labs' language
# when it holds one of ours (`make lab LANG=zh`), and then the locale is put back to C.UTF-8 for JupyterLab.
LAB_LANG ?= $(filter zh zh-CN zh_CN en,$(LANG))

.PHONY: lab test notebooks translations bench bench-load clean constraints chromium site

# setup keeps one stamp per extra in .venv, holding a fingerprint of pyproject.toml and constraints.txt:
# a change reinstalls, otherwise it only fetches what the schema cache lacks and goes on.
lab:
	$(if $(filter $(LANG),$(LAB_LANG)),LANG=C.UTF-8 )$(PYTHON) -m mcplab setup --extra lab $(if $(LAB_LANG),--lang $(LAB_LANG) )$(LAB_ARGS)

$(VENV)/.lab-installed $(VENV)/.test-installed: pyproject.toml constraints.txt
	$(PYTHON) -m mcplab setup --extra $(patsubst .%-installed,%,$(notdir $@)) --no-lab

# For authors, after changing a dependency: the pins for every extra, on every platform, Python 3.10 up.
constraints: pyproject.toml
	{ sed -n '1,2p' constraints.txt; uv pip compile pyproject.toml --all-extras --universal \
	  --python-version 3.10 --no-header --annotation-style line -q; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

# The npm peers the interop tests talk to, kept inside the checkout (.node/, git-ignored), and the
# official conformance suite with the Node it needs: every conformance release crashes on Node 20, so
# node@22 is installed beside it (tests put .node/node_modules/.bin first on PATH when they run it);
# and JupyterHub's proxy for the classroom test (tests/test_jupyterhub.py).
NODE_PACKAGES := @modelcontextprotocol/server-filesystem@2026.8.31 \
                 @modelcontextprotocol/server-everything@2026.8.31 \
                 node@22.23.3 \
                 @modelcontextprotocol/conformance@0.2.0-alpha.12 \
                 configurable-http-proxy@5.3.0
$(NODE_DIR)/.installed: Makefile
	npm install --prefix $(NODE_DIR) --save-exact --no-audit --no-fund --loglevel=error $(NODE_PACKAGES)
	touch $@

# The browser test drives Debian's Chromium (never a browser Playwright downloads), with a CJK font
# for the labs' Chinese. Installed when missing and we may (root, as in CI); otherwise the test skips
# with its reason, and fails under CI=true.
CHROMIUM := /usr/bin/chromium
CJK_FONT := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
chromium:
	@if [ -x $(CHROMIUM) ] && [ -f $(CJK_FONT) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei; \
	else echo "make: not installing chromium and fonts-wqy-microhei (not root, or no apt-get): the browser test needs $(CHROMIUM)"; fi

# The scaling test puts three servers behind Debian's nginx (deploy/nginx/), started unprivileged on
# 127.0.0.1 by the test itself; installed the same way (RUNLEVEL=1: the package must not start a
# system nginx of its own).
NGINX := /usr/sbin/nginx
.PHONY: nginx
nginx:
	@if [ -x $(NGINX) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx; \
	else echo "make: not installing nginx (not root, or no apt-get): the load-balancer test needs $(NGINX)"; fi

# The test extra holds the site extra; the site test builds from the locked files in the user's cache
# (mcplab/site/). Offline, fetch says how many it lacks and pytest runs: the site tests skip (fail under CI=true).
test: $(NODE_DIR)/.installed chromium nginx
	$(PYTHON) -m mcplab setup --extra test --no-lab
	@$(BIN)/python -m mcplab site fetch 2>/dev/null || true
	$(BIN)/python -m pytest

# The course as a static JupyterLite site in site/ (git-ignored): the site extra, every locked file in the
# cache (online, once), then the build (offline). Serve it with: python -m http.server -d site
site:
	$(PYTHON) -m mcplab setup --extra site --no-lab
	$(BIN)/python -m mcplab site fetch
	$(BIN)/python -m mcplab site build

# For authors: re-execute every notebook in place so its stored outputs are current.
notebooks: $(VENV)/.lab-installed $(VENV)/.test-installed
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace labs/*.ipynb labs/solutions/*.ipynb \
	  labs/zh-CN/*.ipynb labs/zh-CN/solutions/*.ipynb

# For authors: catalogs up to date with the English labs and code (changed English comes back fuzzy,
# new English untranslated), the Chinese labs rebuilt and executed, README.zh-CN.md rebuilt; then it
# lists what is left to translate (`mcplab i18n status` for the entries themselves). See translations/README.md.
translations: $(VENV)/.test-installed
	$(BIN)/mcplab i18n

# Side by side with the official SDK: prints the table, writes bench/results/latest.json (see bench/run.py).
bench: $(VENV)/.test-installed
	$(BIN)/python bench/run.py

# The same verdicts under a CPU hog, 20 times over (see bench/under_load.py; tests/test_under_load.py is its short form).
bench-load: $(VENV)/.test-installed
	$(BIN)/python bench/under_load.py --runs 20 --out bench/results/under_load.json

clean:
	rm -rf $(VENV) $(NODE_DIR) .pytest_cache .hypothesis test-output site

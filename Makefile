# The two commands a newcomer needs: `make lab` and `make test`.
# Both create .venv when it is missing and install what they need into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
NODE_DIR := .node
LAB_ARGS ?=

.PHONY: lab test notebooks bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One stamp per extra: a change to pyproject.toml reinstalls.
$(VENV)/.lab-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[lab]"
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

lab: $(VENV)/.lab-installed
	$(BIN)/mcplab lab $(LAB_ARGS)

# The npm peers the interop tests talk to, kept inside the checkout (.node/, git-ignored).
NODE_PACKAGES := @modelcontextprotocol/server-filesystem@2026.8.31 \
                 @modelcontextprotocol/server-everything@2026.8.31
$(NODE_DIR)/.installed: Makefile
	npm install --prefix $(NODE_DIR) --no-audit --no-fund --loglevel=error $(NODE_PACKAGES)
	touch $@

test: $(VENV)/.test-installed $(NODE_DIR)/.installed
	$(BIN)/python -m pytest

# For authors: re-execute every notebook in place so its stored outputs are current.
notebooks: $(VENV)/.lab-installed $(VENV)/.test-installed
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace labs/*.ipynb labs/solutions/*.ipynb

clean:
	rm -rf $(VENV) $(NODE_DIR) .pytest_cache .hypothesis test-output

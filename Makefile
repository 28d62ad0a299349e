# The two commands a newcomer needs: `make lab` and `make test`.
# Both create .venv when it is missing and install what they need into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

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
	$(BIN)/mcplab lab

test: $(VENV)/.test-installed
	$(BIN)/python -m pytest

# For authors: re-execute every notebook in place so its stored outputs are current.
notebooks: $(VENV)/.lab-installed $(VENV)/.test-installed
	$(BIN)/python -m mcplab.tools.run_notebooks labs/*.ipynb labs/solutions/*.ipynb

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis test-output

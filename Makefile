# Two commands do everything on a fresh clone:  make site   and   make test   (make check: seconds)
VENV   ?= .venv
PYTHON ?= python3
PY     := $(VENV)/bin/python
SITE   ?= site
LANG_  ?= en
PORT   ?= 8000
GPU_PYTHON ?= python3

.PHONY: site serve preview check test gpu-build clean

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

site: $(VENV)/.installed          ## build all three languages into $(SITE)/ from the committed measurements
	$(PY) scripts/build_site.py --site-dir $(SITE)

serve: $(VENV)/.installed         ## live preview of one language while writing: make serve LANG_=zh PORT=8001
	$(PY) scripts/serve.py --language $(LANG_) --port $(PORT)

preview: site                     ## the built site in all languages, switcher included: make preview PORT=8001
	$(PY) scripts/serve.py --site $(SITE) --port $(PORT)

check: $(VENV)/.installed         ## the author's checks, in seconds: includes, languages, quotes, notebooks, listings, data
	$(PY) scripts/check.py

test: $(VENV)/.installed          ## make check (a chapter not measured yet: one line, not a failure), then every test
	$(PY) scripts/check.py --skip-placeholders
	$(PY) -m pytest snippets tests

gpu-build:                        ## on a CUDA machine with the requirements: tests (the GPU record), measure, render, notebooks
	PYTHONPATH=snippets$${PYTHONPATH:+:$$PYTHONPATH} $(GPU_PYTHON) scripts/gpu_build.py

clean:
	rm -rf $(SITE) $(VENV)

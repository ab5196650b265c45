"""``FROM`` mapped to Debian releases (with what differs), unsupported bases refused with the reason, and the
ownership shift that makes a built tree the namespace's."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_jeval.sandbox.shell.images import UnsupportedBase, resolve_base, shift_ownership


@pytest.mark.parametrize(("reference", "release", "flavor", "python"), [
    ("debian:bookworm-slim", "bookworm", "debian", None),
    ("debian:12.5", "bookworm", "debian", None),
    ("docker.io/library/debian:bullseye", "bullseye", "debian", None),
    ("debian:trixie", "trixie", "debian", None),
    ("ubuntu:22.04", "bookworm", "debian", None),
    ("ubuntu:24.04", "trixie", "debian", None),
    ("ubuntu:focal", "bullseye", "debian", None),
    ("python:3.13-slim-bookworm", "bookworm", "python-slim", "3.11"),
    ("python:3.11-slim-bookworm", "bookworm", "python-slim", "3.11"),
    ("python:3.12-slim", "trixie", "python-slim", "3.13"),
    ("python:3.9-bullseye", "bullseye", "python", "3.9"),
    ("ghcr.io/laude-institute/t-bench/python-3-13:20250620", "bookworm", "python-slim", "3.11"),
    ("ghcr.io/laude-institute/t-bench/ubuntu-24-04:latest", "trixie", "debian", None),
])
def test_supported_bases_map_to_a_debian_release(reference: str, release: str, flavor: str,
                                                 python: str | None) -> None:
    image = resolve_base(reference)
    assert (image.release, image.flavor, image.python) == (release, flavor, python)
    assert image.name.startswith(f"{release}-{flavor}-")


def test_what_differs_from_the_image_is_said() -> None:
    notes = " ".join(resolve_base("python:3.13-slim-bookworm").notes)
    assert "Python 3.13 requested, Debian bookworm's python3 (3.11) provided" in notes
    assert not any("requested" in n for n in resolve_base("python:3.11-slim-bookworm").notes)
    assert "built as Debian trixie" in " ".join(resolve_base("ubuntu:24.04").notes)
    assert "names no Debian release" in " ".join(resolve_base("python:3.12-slim").notes)
    assert "digest" in " ".join(resolve_base("debian:12@sha256:" + "a" * 64).notes)
    # the two python tags of one release share one tree; another flavor does not
    assert resolve_base("python:3.13-slim-bookworm").key() == resolve_base("python:3.11-slim-bookworm").key()
    assert resolve_base("python:3.11-bookworm").key() != resolve_base("python:3.11-slim-bookworm").key()


@pytest.mark.parametrize(("reference", "reason"), [
    ("alpine:3.20", "'alpine' images are not supported"),
    ("python:3.12-alpine", "not a python image on Debian"),
    ("nvidia/cuda:12.2.0-runtime-ubuntu22.04", "needs a GPU"),
    ("ubuntu:18.04", "Ubuntu '18.04' is not mapped"),
    ("debian:sid", "not a release this builder knows"),
    ("scratch", "'scratch' images are not supported"),
])
def test_unsupported_bases_are_refused_with_the_reason(reference: str, reason: str) -> None:
    with pytest.raises(UnsupportedBase, match=reason) as caught:
        resolve_base(reference)
    assert f"FROM {reference}" in str(caught.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to other uids needs root")
def test_shifting_ownership_keeps_set_id_bits_and_links(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "bin").mkdir(parents=True)
    tool = root / "bin" / "su"
    tool.write_text("x")
    os.chmod(tool, 0o4755)
    os.link(tool, root / "bin" / "su2")  # one inode: shifted once
    os.symlink("su", root / "bin" / "link")
    os.lchown(root / "bin" / "link", 0, 0)
    shift_ownership(root, 1_000_000)
    for path in (root, root / "bin", tool, root / "bin" / "link"):
        assert os.lstat(path).st_uid == 1_000_000 + 0
    assert stat.S_IMODE(os.stat(tool).st_mode) == 0o4755

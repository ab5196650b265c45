"""The per-episode workspace and the file tools confined to it."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_jeval.agents import workspace as workspace_module
from pytest_jeval.agents.tool import ToolContext, ToolError
from pytest_jeval.agents.tools import MAX_FILE_READ_BYTES, MAX_FILE_WRITE_BYTES, TOOLS
from pytest_jeval.agents.workspace import confine, make_workspace, open_in, remove_workspace
from pytest_jeval.core.sample import Sample


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    path = make_workspace(parent=str(tmp_path))
    yield path
    remove_workspace(path)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("top secret\n")
    return secret


def ctx_for(path: Path) -> ToolContext:
    return ToolContext(sample=Sample(id="s1", input="q"), workspace=path)


def call(name: str, workspace: Path, **args: object) -> str:
    fn = TOOLS.get(name).fn
    assert fn is not None
    return str(fn(**args, ctx=ctx_for(workspace)))


# --- make_workspace / remove_workspace ------------------------------------------------------------


def test_make_workspace_copies_files_by_base_name(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "a" / "data.csv").write_text("x,y\n1,2\n")
    (src / "notes.txt").write_bytes(b"\xff\x00binary")
    link = src / "linked.json"
    link.symlink_to(src / "a" / "data.csv")  # a dataset cache may hold links: the content is copied
    ws = make_workspace([src / "a" / "data.csv", str(src / "notes.txt"), link], parent=str(tmp_path))
    try:
        assert stat.S_IMODE(ws.stat().st_mode) == 0o700
        assert ws.parent == tmp_path / f"jeval-workspace-{os.geteuid()}"
        assert stat.S_IMODE(ws.parent.stat().st_mode) == 0o711
        assert sorted(p.name for p in ws.iterdir()) == ["data.csv", "linked.json", "notes.txt"]
        assert (ws / "data.csv").read_text() == "x,y\n1,2\n"
        assert (ws / "notes.txt").read_bytes() == b"\xff\x00binary"
        assert not (ws / "linked.json").is_symlink() and (ws / "linked.json").read_text() == "x,y\n1,2\n"
        again = make_workspace(parent=str(tmp_path))
        assert again != ws and list(again.iterdir()) == []
        remove_workspace(again)
    finally:
        remove_workspace(ws)
    assert not ws.exists()


@pytest.mark.parametrize("case", ["duplicate", "missing", "directory"])
def test_make_workspace_refuses_bad_attachments_before_making_anything(tmp_path: Path, case: str) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "f.txt").write_text("1")
    (tmp_path / "two" / "f.txt").write_text("2")
    files = {
        "duplicate": [tmp_path / "one" / "f.txt", tmp_path / "two" / "f.txt"],
        "missing": [tmp_path / "one" / "nope.txt"],
        "directory": [tmp_path / "two"],
    }[case]
    message = {"duplicate": "base name 'f.txt'", "missing": "does not exist", "directory": "not a regular file"}
    with pytest.raises(ValueError, match=message[case]):
        make_workspace(files, parent=str(tmp_path / "base"))
    base = tmp_path / "base" / f"jeval-workspace-{os.geteuid()}"
    assert not base.exists() or list(base.iterdir()) == []


def test_remove_workspace_never_follows_links(ws: Path, outside: Path) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "link").symlink_to(outside.parent)
    (ws / "file-link").symlink_to(outside)
    remove_workspace(ws)
    assert not ws.exists()
    assert outside.read_text() == "top secret\n"
    remove_workspace(ws)  # already gone: fine


# --- confine ---------------------------------------------------------------------------------------


def test_confine_accepts_paths_inside(ws: Path) -> None:
    (ws / "sub").mkdir()
    (ws / "sub" / "f.txt").write_text("x")
    (ws / "inner-link").symlink_to(ws / "sub")
    root = Path(os.path.realpath(ws))
    assert confine(ws, "sub/f.txt") == root / "sub" / "f.txt"
    assert confine(ws, "./sub/../sub/f.txt") == root / "sub" / "f.txt"
    assert confine(ws, str(ws / "sub" / "f.txt")) == root / "sub" / "f.txt"
    assert confine(ws, "/sandbox/sub/f.txt") == root / "sub" / "f.txt"
    assert confine(ws, "inner-link/f.txt") == root / "sub" / "f.txt"  # a link that stays inside is fine
    assert confine(ws, ".") == root and confine(ws, "") == root
    assert confine(ws, "new/dir/file.txt") == root / "new" / "dir" / "file.txt"


@pytest.mark.parametrize("path", [
    "..", "../x", "sub/../../x", "/etc/passwd", "/", "/sandbox/../etc/passwd", "nul\x00byte",
    "link-out/secret.txt", "file-link-out", "dangling-out",
])
def test_confine_refuses_paths_outside(ws: Path, outside: Path, path: str) -> None:
    (ws / "sub").mkdir()
    (ws / "link-out").symlink_to(outside.parent)
    (ws / "file-link-out").symlink_to(outside)
    (ws / "dangling-out").symlink_to(outside.parent / "does-not-exist-yet")
    with pytest.raises(ToolError, match=r"outside the workspace|NUL"):
        confine(ws, path)


def test_confine_refuses_the_workspace_siblings(ws: Path) -> None:
    sibling = Path(str(ws) + "-other")  # shares the workspace's name as a prefix
    with pytest.raises(ToolError, match="outside"):
        confine(ws, str(sibling / "f"))
    with pytest.raises(ToolError, match="outside"):
        confine(ws, f"../{ws.name}-other/f")


def test_a_link_planted_after_the_check_is_not_followed(
        ws: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race: ``d`` is a directory when confined, a link out when opened."""
    (ws / "d").mkdir()
    (ws / "d" / "secret.txt").write_text("inside\n")
    real_confine = workspace_module.confine

    def confine_then_swap(workspace: Path, path: str) -> Path:
        resolved = real_confine(workspace, path)
        (ws / "d" / "secret.txt").unlink()
        (ws / "d").rmdir()
        (ws / "d").symlink_to(outside.parent)
        return resolved

    monkeypatch.setattr(workspace_module, "confine", confine_then_swap)
    with pytest.raises(ToolError, match="changed into a link"):
        with open_in(ws, "d/secret.txt"):
            pass


# --- file tools ------------------------------------------------------------------------------------


def test_file_write_then_file_read_and_list_files(ws: Path) -> None:
    assert call("file_write", ws, path="out/result.txt", content="héllo\nworld\n") == \
        "wrote 13 bytes to out/result.txt"
    assert call("file_read", ws, path="out/result.txt") == "héllo\nworld\n"
    assert (ws / "out" / "result.txt").read_text() == "héllo\nworld\n"
    assert call("file_write", ws, path="out/result.txt", content="short") == "wrote 5 bytes to out/result.txt"
    assert call("file_read", ws, path="out/result.txt") == "short"  # replaced, not overwritten in place
    (ws / "b.bin").write_bytes(b"\xff\xfeok")
    assert call("file_read", ws, path="b.bin") == "\ufffd\ufffdok"
    assert call("list_files", ws) == "b.bin  (4 bytes)\nout/"
    assert call("list_files", ws, path="out") == "result.txt  (5 bytes)"
    (ws / "empty").mkdir()
    assert call("list_files", ws, path="empty") == "empty: empty directory"


@pytest.mark.parametrize("tool_name", ["file_read", "list_files", "file_write"])
def test_file_tools_outside_the_workspace_are_denied(ws: Path, outside: Path, tool_name: str) -> None:
    (ws / "link-out").symlink_to(outside.parent)
    args: dict[str, object] = {"content": "pwned"} if tool_name == "file_write" else {}
    for path in (str(outside), "../outside/secret.txt", "link-out/secret.txt", "link-out"):
        target = path if tool_name == "list_files" or path.endswith(".txt") else path + "/x"
        with pytest.raises(ToolError, match="outside the workspace"):
            call(tool_name, ws, path=target, **args)
    assert outside.read_text() == "top secret\n"
    assert sorted(p.name for p in outside.parent.iterdir()) == ["secret.txt"]


def test_file_read_caps_what_it_returns(ws: Path) -> None:
    (ws / "big.txt").write_text("a" * (MAX_FILE_READ_BYTES + 10) + "END")
    text = call("file_read", ws, path="big.txt")
    assert text.startswith("a" * MAX_FILE_READ_BYTES + "\n[file_read: showed the first")
    assert f"of {MAX_FILE_READ_BYTES + 13} bytes" in text and "END" not in text
    (ws / "exact.txt").write_text("b" * MAX_FILE_READ_BYTES)
    assert call("file_read", ws, path="exact.txt") == "b" * MAX_FILE_READ_BYTES


def test_file_tools_refuse_what_is_not_a_plain_file(ws: Path) -> None:
    (ws / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        call("file_read", ws, path="d")
    with pytest.raises(ToolError, match="is a directory"):
        call("file_write", ws, path=".", content="x")
    with pytest.raises(ToolError, match="does not exist"):
        call("file_read", ws, path="missing.txt")
    (ws / "plain").write_text("x")
    with pytest.raises(ToolError, match="not a directory"):
        call("file_write", ws, path="plain/y", content="x")
    os.mkfifo(ws / "fifo")  # opening it for reading would block without O_NONBLOCK
    with pytest.raises(ToolError, match="not a regular file"):
        call("file_read", ws, path="fifo")
    (ws / "orig.txt").write_text("keep")
    os.link(ws / "orig.txt", ws / "hard.txt")
    with pytest.raises(ToolError, match="hard links"):
        call("file_write", ws, path="hard.txt", content="changed")
    assert (ws / "orig.txt").read_text() == "keep"
    with pytest.raises(ToolError, match="at most"):
        call("file_write", ws, path="huge.txt", content="x" * (MAX_FILE_WRITE_BYTES + 1))
    assert not (ws / "huge.txt").exists()


def test_file_write_through_a_link_inside_writes_its_target(ws: Path) -> None:
    (ws / "real.txt").write_text("old")
    (ws / "alias.txt").symlink_to("real.txt")
    assert call("file_write", ws, path="alias.txt", content="new") == "wrote 3 bytes to real.txt"
    assert (ws / "real.txt").read_text() == "new" and (ws / "alias.txt").is_symlink()

"""Reading Dockerfiles: instructions and their lines, continuations, forms, flags, heredocs, variables, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_jeval.sandbox.shell.dockerfile import (
    DockerfileError,
    expand,
    parse_dockerfile,
    parse_dockerfile_text,
    process_word,
    split_words,
)

TEXT = r"""# syntax=docker/dockerfile:1
# a comment
FROM python:3.13-slim-bookworm AS base

ARG VERSION=1.2
ENV A=1 \
    # a comment inside a continuation is dropped
    B="two words"
RUN apt-get update \
 && apt-get install -y jq
RUN ["python3", "-c", "print(1)"]
COPY --chown=app:app --chmod=644 a.txt b.txt /dest/
COPY <<EOF /etc/motd
hello ${A}
EOF
RUN <<-'SCRIPT' bash
	echo $HOME
	SCRIPT
cmd ["sleep", "infinity"]
"""


def test_instructions_keep_their_first_line_and_forms() -> None:
    found = parse_dockerfile_text(TEXT, "Dockerfile")
    assert [(i.keyword, i.line) for i in found] == [
        ("FROM", 3), ("ARG", 5), ("ENV", 6), ("RUN", 9), ("RUN", 11), ("COPY", 12), ("COPY", 13), ("RUN", 16),
        ("CMD", 19)]
    env = found[2]
    assert env.args == 'A=1 B="two words"'
    assert found[3].args == "apt-get update && apt-get install -y jq"
    assert found[4].exec_form == ("python3", "-c", "print(1)") and found[3].exec_form is None
    copy = found[5]
    assert copy.flag("chown") == "app:app" and copy.flag("chmod") == "644" and copy.args == "a.txt b.txt /dest/"
    heredoc = found[6].heredocs[0]
    assert (heredoc.name, heredoc.body, heredoc.expand) == ("EOF", "hello ${A}\n", True)
    script = found[7].heredocs[0]
    assert (script.name, script.body, script.expand) == ("SCRIPT", "echo $HOME\n", False)  # tabs stripped, quoted
    assert found[8].keyword == "CMD" and found[8].exec_form == ("sleep", "infinity")  # keywords are case-blind


def test_a_json_array_that_is_not_json_is_the_shell_form() -> None:
    run = parse_dockerfile_text("FROM debian:12\nRUN [ -f /x ] || echo missing\n")[1]
    assert run.exec_form is None and run.args == "[ -f /x ] || echo missing"


def test_the_escape_directive_changes_the_continuation_character() -> None:
    found = parse_dockerfile_text("# escape=`\nFROM debian:12\nRUN echo a `\n  b\n")
    assert found[1].args == "echo a b"


@pytest.mark.parametrize(("text", "line", "message"), [
    ("FROM debian:12\nRUN echo hi\nRUNN echo typo\n", 3, "unknown instruction: RUNN"),
    ("FROM debian:12\nRUN echo a\n  apt-get install jq\n", 3, "unknown instruction: apt-get"),
    ("FROM debian:12\nCOPY <<EOF /x\nnever closed\n", 2, "here-document <<EOF is not closed"),
    ("FROM debian:12\nWORKDIR\n", 2, "WORKDIR requires at least one argument"),
    ("FROM debian:12\nSHELL /bin/bash -c\n", 2, "SHELL requires the JSON form"),
    ("# escape=x\nFROM debian:12\n", 1, "invalid escape directive"),
])
def test_a_malformed_dockerfile_names_the_file_and_the_line(tmp_path: Path, text: str, line: int,
                                                            message: str) -> None:
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    with pytest.raises(DockerfileError) as caught:
        parse_dockerfile(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: ") and message in str(caught.value)


def test_variables_and_words() -> None:
    env = {"A": "one", "EMPTY": ""}
    assert expand("$A/${A}/${MISSING:-dflt}/${A:+set}/${EMPTY:-e}/${MISSING:+no}/\\$A", env) == "one/one/dflt/set/e//$A"
    assert split_words('A="x y" B=\'$A\' C=$A D=a\\ b', env) == ["A=x y", "B=$A", "C=one", "D=a b"]
    assert process_word('"/my dir/$A"', env) == "/my dir/one"
    with pytest.raises(ValueError, match="unterminated"):
        split_words('A="open')
    with pytest.raises(ValueError, match="bad substitution"):
        expand("${A", env)

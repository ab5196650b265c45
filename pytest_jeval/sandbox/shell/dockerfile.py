"""Reading a Dockerfile without Docker: instructions, line numbers, variables, heredocs.

:func:`parse_dockerfile` turns the text into :class:`Instruction` objects (one per
instruction, with the line it starts on); :class:`DockerfileError` names the file and the
line of anything malformed. What each instruction *does* is up to the builder
(:mod:`.environments`); this module only reads them.

Handled as Docker's reference describes them: parser directives (``# escape=`` and
``# syntax=`` at the top), comments and empty lines, line continuations (with the escape
character), the JSON ("exec") form of ``RUN``/``CMD``/``ENTRYPOINT``/``SHELL`` and of
``COPY``/``ADD`` paths, ``--flag=value`` options, BuildKit heredocs (``RUN <<EOF`` and
``COPY <<EOF /path``), and variable substitution (``$VAR``, ``${VAR}``, ``${VAR:-word}``,
``${VAR:+word}``, ``\\$`` for a literal dollar) for the instructions that get it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["INSTRUCTIONS", "DockerfileError", "Heredoc", "Instruction", "expand", "parse_dockerfile",
           "parse_dockerfile_text", "process_word", "split_words"]

INSTRUCTIONS = ("ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
                "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR")
"""Every instruction of the Dockerfile reference."""
_EXEC_FORM = ("RUN", "CMD", "ENTRYPOINT", "SHELL", "COPY", "ADD")
_HEREDOC_OK = ("RUN", "COPY", "ADD")
_HEREDOC = re.compile(r"<<(-?)(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_DIRECTIVE = re.compile(r"^#\s*([A-Za-z]+)\s*=\s*(.*?)\s*$")
_FLAG = re.compile(r"^--([A-Za-z][A-Za-z0-9-]*)(?:=(.*))?$")


class DockerfileError(ValueError):
    """A Dockerfile that cannot be read: ``path:line: message``."""

    def __init__(self, path: str | Path, line: int, message: str) -> None:
        self.path, self.line, self.message = str(path), line, message
        super().__init__(f"{path}:{line}: {message}")


@dataclasses.dataclass(frozen=True)
class Heredoc:
    """A BuildKit here-document attached to an instruction."""

    name: str
    """The delimiter word (``EOF``)."""
    body: str
    """Its lines, each ending with a newline (leading tabs removed for ``<<-``)."""
    expand: bool
    """False when the delimiter was quoted (no variable expansion, as in a shell)."""


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One instruction: its keyword, options and arguments, and where it starts."""

    keyword: str
    """Upper case (``RUN``)."""
    args: str
    """The text after the keyword and its ``--flags``, continuation lines joined with a space."""
    line: int
    """The 1-based line the instruction starts on."""
    flags: tuple[tuple[str, str], ...] = ()
    """``--name=value`` options (``--chown``, ``--from``, ``--mount``, ...), in order."""
    exec_form: tuple[str, ...] | None = None
    """The JSON array form (``RUN ["a", "b"]``), or None for the shell form."""
    heredocs: tuple[Heredoc, ...] = ()
    """Here-documents that follow the instruction's line."""
    raw: str = ""
    """The instruction as written (continuations joined), for messages."""

    def flag(self, name: str) -> str | None:
        """The value of ``--name`` (the last one given), or None."""
        found = [value for key, value in self.flags if key == name]
        return found[-1] if found else None

    def flag_values(self, name: str) -> list[str]:
        """Every value of a repeatable ``--name`` (``--mount``)."""
        return [value for key, value in self.flags if key == name]


def _directives(lines: list[str]) -> tuple[str, int]:
    """The escape character and the index of the first line after the parser directives."""
    escape, seen = "\\", set()
    for i, line in enumerate(lines):
        match = _DIRECTIVE.match(line.strip())
        if not match:
            return escape, i
        name, value = match.group(1).lower(), match.group(2)
        if name in seen:
            return escape, i  # a repeated directive is an ordinary comment
        seen.add(name)
        if name == "escape":
            if value not in ("\\", "`"):
                raise ValueError(f"invalid escape directive {value!r}: it must be \\ or `")
            escape = value
    return escape, len(lines)


def _split_flags(text: str) -> tuple[list[tuple[str, str]], str]:
    flags: list[tuple[str, str]] = []
    rest = text
    while rest.startswith("--"):
        word, _, after = rest.partition(" ")
        match = _FLAG.match(word)
        if not match:
            break
        flags.append((match.group(1), match.group(2) if match.group(2) is not None else "true"))
        rest = after.lstrip()
    return flags, rest


def parse_dockerfile_text(text: str, path: str | Path = "Dockerfile") -> list[Instruction]:
    """The instructions of a Dockerfile's text; :class:`DockerfileError` naming ``path`` and the line."""
    lines = text.splitlines()
    try:
        escape, start = _directives(lines)
    except ValueError as exc:
        raise DockerfileError(path, 1, str(exc)) from None
    out: list[Instruction] = []
    i = start
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        first = i
        parts: list[str] = []
        while True:
            line = lines[i].rstrip()
            continued = line.endswith(escape)
            parts.append(line[:-1] if continued else line)
            i += 1
            if not continued:
                break
            # comment and empty lines inside a continuation are skipped
            while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                i += 1
            if i >= len(lines):
                break
        joined = " ".join(p.strip() for p in parts if p.strip())
        keyword, _, rest = joined.partition(" ")
        upper = keyword.upper()
        if upper not in INSTRUCTIONS:
            hint = " (a line continuation may be missing on the line before)" if out else ""
            raise DockerfileError(path, first + 1, f"unknown instruction: {keyword}{hint}")
        flags, rest = _split_flags(rest.strip())
        heredocs: list[Heredoc] = []
        if upper in _HEREDOC_OK:
            for match in _HEREDOC.finditer(rest):
                strip_tabs, quote, name = match.group(1) == "-", match.group(2), match.group(3)
                body: list[str] = []
                while True:
                    if i >= len(lines):
                        raise DockerfileError(path, first + 1, f"here-document <<{name} is not closed "
                                              f"(no line {name!r} before the end of the file)")
                    line = lines[i]
                    i += 1
                    if (line.lstrip("\t") if strip_tabs else line) == name:
                        break
                    body.append((line.lstrip("\t") if strip_tabs else line) + "\n")
                heredocs.append(Heredoc(name, "".join(body), expand=not quote))
        exec_form: tuple[str, ...] | None = None
        if upper in _EXEC_FORM and rest.startswith("["):
            try:
                value = json.loads(rest)
            except ValueError:
                value = None  # not JSON: Docker reads it as the shell form
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                exec_form = tuple(value)
        if not rest and not heredocs:
            raise DockerfileError(path, first + 1, f"{upper} requires at least one argument")
        if upper == "SHELL" and exec_form is None:
            raise DockerfileError(path, first + 1, "SHELL requires the JSON form: SHELL [\"executable\", \"param\"]")
        out.append(Instruction(upper, rest, first + 1, tuple(flags), exec_form, tuple(heredocs), joined))
    return out


def parse_dockerfile(path: Path) -> list[Instruction]:
    """Read and parse a Dockerfile (see :func:`parse_dockerfile_text`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DockerfileError(path, 1, "the file is not UTF-8 text") from None
    return parse_dockerfile_text(text, path)


# ------------------------------------------------------------------------------------- words, variables

def split_words(text: str, variables: Mapping[str, str] | None = None, *, escape: str = "\\") -> list[str]:
    """Split on unquoted whitespace, removing quotes and escapes, substituting variables outside single quotes
    when ``variables`` is given (how ``ENV``/``LABEL``/``ARG`` pairs and ``COPY`` paths are read). ValueError for
    an unterminated quote or a malformed ``${...}``."""
    return _lex(text, variables, escape, split=True)


def process_word(text: str, variables: Mapping[str, str] | None = None, *, escape: str = "\\") -> str:
    """One word (``WORKDIR``, ``USER``, ``FROM``): quotes and escapes removed, variables substituted, spaces kept."""
    words = _lex(text.strip(), variables, escape, split=False)
    return words[0] if words else ""


def _lex(text: str, variables: Mapping[str, str] | None, escape: str, *, split: bool) -> list[str]:
    words: list[str] = []
    current: list[str] = []
    have = False
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "$" and quote != "'" and variables is not None:
            value, i = _substitute(text, i, variables, escape)
            current.append(value)
            have = True
            continue
        if quote:
            if ch == quote:
                quote = ""
            elif ch == escape and quote == '"' and i + 1 < len(text) and text[i + 1] in ('"', "$", escape):
                i += 1
                current.append(text[i])
            else:
                current.append(ch)
        elif ch in "'\"":
            quote, have = ch, True
        elif ch == escape and i + 1 < len(text):
            i += 1
            current.append(text[i])
            have = True
        elif ch.isspace() and split:
            if have or current:
                words.append("".join(current))
                current, have = [], False
        else:
            current.append(ch)
            have = True
        i += 1
    if quote:
        raise ValueError(f"unterminated quote {quote} in {text!r}")
    if have or current:
        words.append("".join(current))
    return words


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def expand(text: str, variables: Mapping[str, str], *, escape: str = "\\") -> str:
    """Docker's variable substitution alone (quotes kept): ``$V``, ``${V}``, ``${V:-default}``,
    ``${V:+alternative}``; an unset variable is empty; ``\\$`` is a literal dollar sign. ValueError for a
    malformed ``${...}``."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == escape and i + 1 < len(text) and text[i + 1] == "$":
            out.append("$")
            i += 2
        elif ch == "$":
            value, i = _substitute(text, i, variables, escape)
            out.append(value)
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _substitute(text: str, i: int, variables: Mapping[str, str], escape: str) -> tuple[str, int]:
    """The value of the reference at ``text[i]`` (a ``$``) and the index after it."""
    match = _VAR.match(text, i)
    if match is None:
        if text.startswith("${", i):
            raise ValueError(f"bad substitution in {text!r}")
        return "$", i + 1
    name = match.group(1) or match.group(4)
    value = variables.get(name)
    op, word = match.group(2), match.group(3)
    if op == ":-":
        return (value if value else expand(word or "", variables, escape=escape)), match.end()
    if op == ":+":
        return (expand(word or "", variables, escape=escape) if value else ""), match.end()
    return value or "", match.end()

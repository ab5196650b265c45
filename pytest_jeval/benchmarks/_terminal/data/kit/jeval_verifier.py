"""The offline stand-ins a Terminal-Bench verifier finds first on its PATH (pytest-jeval's verifier kit).

Run by the kit's own Python (read-only, mounted at /jeval/kit, never seen by the agent) as
``jeval_verifier.py <command> ARGS``. Upstream verifiers fetch ``uv`` with ``curl`` and let
``uvx``/``uv run`` download Python and pytest; here those packages were installed into the
kit when the environment was built, and these stand-ins run them:

``uv``/``uvx``    ``uvx [-p V] [-w PKG]... pytest ARGS`` and ``uv run [--with PKG]... CMD`` run CMD from the
                  kit; ``uv add``/``uv pip install``/``uv init``/``uv venv``/``uv sync`` check the packages are
                  in the kit and do nothing else.
``pytest``        the kit's pytest, confined to /tests (``--confcutdir``; the task's own ini file in /tests,
                  else the kit's: no ini or conftest.py the agent left elsewhere is read).
``curl``/``wget`` the uv installer URL installs the stand-ins; localhost goes to the real program; any other
                  URL is noted as a network need and fails as it would offline.
``apt-get``/``apt`` ``update`` does nothing; ``install`` succeeds when the packages are installed (curl and
                  wget are stood in for), else notes a network need.
``pip``/``pip3``  ``install`` checks the kit has the packages; anything else goes to the image's pip.

A network need is appended to /jeval/notes/network.txt: the harness then scores a failed
verification as unscored (the network was missing), not as a wrong answer.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys

KIT = "/jeval/kit"
NOTES = "/jeval/notes/network.txt"
PYTHON = f"{KIT}/bin/python3"
UV_INSTALLER = re.compile(r"astral\.sh/uv/(?:[0-9.]+/)?install\.sh|github\.com/astral-sh/uv/releases")
LOCAL = re.compile(r"^(?:https?://)?(?:localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)(?:[:/]|$)")
STANDINS = ("curl", "wget")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def note(text: str) -> None:
    """Record a network need for the harness."""
    try:
        with open(NOTES, "a", encoding="utf-8") as fh:
            fh.write(text.replace("\n", " ")[:500] + "\n")
    except OSError:
        pass


def real(program: str) -> str | None:
    """``program`` on PATH, the kit's own folder left out."""
    for folder in os.environ.get("PATH", "").split(":"):
        if not folder or folder.rstrip("/") == f"{KIT}/bin":
            continue
        path = os.path.join(folder, program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def missing(requirements: list[str]) -> list[str]:
    """The requirements whose distribution is not in the kit."""
    lost = []
    for req in requirements:
        match = _NAME.match(req)
        if match is None or req.startswith(("-", "/", ".")) or "$" in req:
            continue
        try:
            importlib.metadata.distribution(match.group(1))
        except importlib.metadata.PackageNotFoundError:
            lost.append(req)
    return lost


def run_pytest(args: list[str]) -> int:
    """The kit's pytest, confined to /tests unless the verifier points elsewhere."""
    import pytest

    forced = ["-p", "no:cacheprovider"]
    paths = [a for a in args if not a.startswith("-") and os.path.exists(a.split("::")[0])]
    if not any(a in ("-c", "--config-file") or a.startswith(("--config-file=", "-c=")) for a in args):
        own = [p for p in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
               if os.path.isfile(os.path.join("/tests", p))]
        forced += ["-c", os.path.join("/tests", own[0]) if own else f"{KIT}/pytest.ini", "--rootdir", "/tests"]
    if all(os.path.abspath(p).startswith("/tests") for p in paths) and not any(a.startswith("--confcutdir")
                                                                                for a in args):
        forced += ["--confcutdir", "/tests"]
    return int(pytest.main(forced + args))


def exec_command(argv: list[str]) -> int:
    """Run a command the way ``uvx``/``uv run`` would: pytest and python from the kit, anything else from PATH."""
    if not argv:
        return 0
    name = os.path.basename(argv[0])
    if name in ("pytest", "py.test"):
        return run_pytest(argv[1:])
    if re.fullmatch(r"python(3(\.\d+)?)?", name):
        os.execv(PYTHON, [PYTHON, *argv[1:]])
    return subprocess.call(argv)


def uv(args: list[str], *, uvx: bool) -> int:
    """``uv``/``uvx`` offline."""
    if not uvx:
        if not args or args[0] in ("--version", "-V", "version", "self", "cache", "python", "init", "venv", "sync",
                                   "lock", "help", "--help"):
            if args and args[0] in ("--version", "-V", "version"):
                print("uv 0.0.0 (pytest-jeval offline stand-in)")
            return 0
        if args[0] in ("add", "remove") or args[:2] == ["pip", "install"]:
            packages = _packages(args[1:] if args[0] in ("add", "remove") else args[2:])
            lost = missing(packages) if args[0] != "remove" else []
            if lost:
                note(f"uv {' '.join(args)}: {', '.join(lost)} not in the offline verifier kit")
                print(f"error: no network: {', '.join(lost)} cannot be installed", file=sys.stderr)
                return 2
            return 0
        if args[0] == "pip":
            return 0  # uv pip list/show/freeze: nothing useful offline
        if args[0] == "tool" and args[1:2] == ["run"]:
            args, uvx = args[2:], True
        elif args[0] == "run":
            args = args[1:]
        else:
            note(f"uv {' '.join(args)}")
            print(f"error: `uv {args[0]}` is not available offline", file=sys.stderr)
            return 2
    wanted: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-"):
            break
        key, eq, value = arg.partition("=")
        takes = key in ("-w", "--with", "--from", "-p", "--python", "--with-requirements", "--directory",
                        "--project", "--index-url", "--extra-index-url", "--env-file", "--group", "--extra")
        if takes and not eq:
            i += 1
            value = args[i] if i < len(args) else ""
        if key in ("-w", "--with", "--from"):
            wanted.extend(v for v in value.split(",") if v)
        i += 1
    command = args[i:]
    lost = missing(wanted)
    if lost:
        note(f"{'uvx' if uvx else 'uv run'} --with {' '.join(lost)}: not in the offline verifier kit")
        print(f"error: no network: {', '.join(lost)} cannot be installed", file=sys.stderr)
        return 2
    return exec_command(command)


def _packages(args: list[str]) -> list[str]:
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-r", "--requirement", "-p", "--python", "-e", "--editable", "--group", "--index-url"):
            skip = True
        elif not arg.startswith("-"):
            out.append(arg)
    return out


def fetch(program: str, args: list[str]) -> int:
    """``curl``/``wget`` offline: the uv installer becomes the stand-ins, localhost goes to the real program."""
    urls = [a for a in args if re.match(r"^[a-z]+://", a) or LOCAL.match(a)]
    if any(UV_INSTALLER.search(u) for u in urls):
        print(INSTALLER)  # piped into sh by the verifier
        return 0
    if urls and all(LOCAL.match(u) for u in urls):
        found = real(program)
        if found is None:
            print(f"{program}: not installed", file=sys.stderr)
            return 127
        os.execv(found, [found, *args])
    note(f"{program} {' '.join(args)}")
    print(f"{program}: (6) Could not resolve host: there is no network during verification", file=sys.stderr)
    return 6 if program == "curl" else 4


INSTALLER = """
mkdir -p "$HOME/.local/bin" "$HOME/.cargo/bin"
for d in "$HOME/.local/bin" "$HOME/.cargo/bin"; do
  ln -sf /jeval/kit/bin/uv "$d/uv"; ln -sf /jeval/kit/bin/uvx "$d/uvx"
done
: > "$HOME/.local/bin/env"; : > "$HOME/.cargo/env"
echo "uv: the pytest-jeval offline stand-in (packages were installed when the environment was built)"
"""


def apt(program: str, args: list[str]) -> int:
    """``apt-get``/``apt`` offline."""
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] in ("update", "clean", "autoclean", "autoremove"):
        return 0
    if words[0] == "install":
        lost = []
        for package in words[1:]:
            name = package.split("=")[0]
            if name in STANDINS:
                continue
            done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True,
                                  check=False)
            if "ok installed" not in done.stdout:
                lost.append(package)
        if lost:
            note(f"{program} install {' '.join(lost)}")
            print(f"E: there is no network during verification: cannot install {' '.join(lost)}", file=sys.stderr)
            return 100
        return 0
    found = real(program)
    return subprocess.call([found, *args]) if found else 100


def pip(program: str, args: list[str]) -> int:
    """``pip install`` checks the kit; other pip commands go to the image's pip."""
    if args[:1] == ["install"]:
        lost = missing(_packages(args[1:]))
        if lost:
            note(f"{program} install {' '.join(lost)}")
            print(f"ERROR: there is no network during verification: {', '.join(lost)}", file=sys.stderr)
            return 1
        return 0
    found = real(program)
    return subprocess.call([found, *args]) if found else 1


def main(argv: list[str]) -> int:
    """Dispatch on the stand-in's name."""
    command, args = argv[1], argv[2:]
    if command in ("uv", "uvx"):
        return uv(args, uvx=command == "uvx")
    if command in ("pytest", "py.test"):
        return run_pytest(args)
    if command in STANDINS:
        return fetch(command, args)
    if command in ("apt-get", "apt"):
        return apt(command, args)
    if command in ("pip", "pip3"):
        return pip(command, args)
    print(f"jeval_verifier: unknown stand-in {command}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

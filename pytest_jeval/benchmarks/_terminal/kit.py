"""The verifier kit: a read-only Python with pytest (and what the task's verifier asks for), replacing uv's
internet bootstrap.

Terminal-Bench verifiers fetch ``uv`` with ``curl`` and have ``uvx -p 3.13 -w pytest==8.4.1 ...``
download Python and the packages when they run. Here nothing is fetched at verify time:

- the **runtime** is Debian trixie's ``python3`` (3.13) in a root filesystem of its own, built once
  (:func:`~pytest_jeval.sandbox.shell.images.build_base`) and mounted read-only at ``/jeval/runtime``;
- the **kit** (``/jeval/kit``, read-only) holds the packages the verifier's scripts name
  (``uvx -w``, ``uv run --with``, ``uv add``, ``uv pip install``, ``pip install``; pytest 8.4.1 when
  none is named), installed with pip when the environment is built, and the stand-ins of
  ``data/kit/jeval_verifier.py`` (``uv``, ``uvx``, ``pytest``, ``python``, ``pip``, ``curl``, ``wget``,
  ``apt-get``), first on the verifier's ``PATH``.

The agent never sees either (they are mounted only for the verifier), so nothing it plants in the
environment (a ``sitecustomize.py``, a ``.pth`` file, a ``conftest.py`` above ``/tests``, a patched
pytest, a ``python`` early on ``PATH``) is used by them. The kit's Python is started through the
runtime's own dynamic loader, with the runtime's libraries.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path

from pytest_jeval.sandbox.shell.image_sandbox import Mount
from pytest_jeval.sandbox.shell.images import PYTHON_OF, BaseImage, BuildError, build_base, cache_lock, env_cache_dir

__all__ = ["DEFAULT_PYTEST", "KIT_MOUNT", "NOTES_MOUNT", "RUNTIME", "RUNTIME_MOUNT", "Kit", "build_kit", "kit_mounts",
           "requirements_of", "verifier_path"]

KIT_VERSION = 1
DEFAULT_PYTEST = "pytest==8.4.1"
"""The pytest of Terminal-Bench 2's verifiers, installed when the verifier names none."""
RUNTIME = BaseImage("pytest-jeval verifier runtime", "trixie", "python-slim",
                    ("python3", "python3-pip", "ca-certificates"))
"""The kit's Python: Debian trixie's python3 (3.13, the version Terminal-Bench 2's ``uvx -p 3.13`` asks for)."""
KIT_MOUNT, RUNTIME_MOUNT, NOTES_MOUNT = "/jeval/kit", "/jeval/runtime", "/jeval/notes"
STANDINS = ("uv", "uvx", "pytest", "py.test", "pip", "pip3", "curl", "wget", "apt-get", "apt")
KIT_FILES = Path(__file__).with_name("data") / "kit"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclasses.dataclass(frozen=True)
class Kit:
    """A built verifier kit."""

    path: Path
    runtime: Path
    requirements: tuple[str, ...]
    python: str
    """The kit's Python version (``3.13``)."""
    build_seconds: float
    """Seconds this call spent building (0.0 from the cache)."""


def _canonical(requirement: str) -> str:
    match = _NAME.match(requirement)
    return re.sub(r"[-_.]+", "-", match.group(0)).lower() if match else requirement


def requirements_of(scripts: list[str]) -> list[str]:
    """The packages the verifier's shell scripts install or run with (``uvx -w``, ``uv run --with``, ``uv add``,
    ``uv pip install``, ``pip install``), first mention of each name; pytest 8.4.1 when none is named."""
    found: dict[str, str] = {}

    def add(value: str) -> None:
        for item in value.split(","):
            item = item.strip()
            if item and not item.startswith(("-", "/", ".", "$")) and "$" not in item and _NAME.match(item):
                found.setdefault(_canonical(item), item)

    for text in scripts:
        for line in text.replace("\\\n", " ").splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            for i, word in enumerate(words):
                base = os.path.basename(word)
                rest = words[i + 1:]
                if base == "uvx" or (base == "uv" and rest[:1] in (["run"], ["tool"])):
                    j = 0
                    while j < len(rest) and rest[j] not in ("&&", "||", ";", "|"):
                        key, eq, value = rest[j].partition("=")
                        if key in ("-w", "--with", "--from"):
                            if not eq and j + 1 < len(rest):
                                j += 1
                                value = rest[j]
                            add(value)
                        j += 1
                elif (base == "uv" and rest[:1] == ["add"]) or (base == "uv" and rest[:2] == ["pip", "install"]) \
                        or (base in ("pip", "pip3") and rest[:1] == ["install"]) \
                        or (base.startswith("python") and rest[:3] == ["-m", "pip", "install"]):
                    start = {"add": 1}.get(rest[0], 2 if rest[0] == "pip" else 1)
                    if rest[0] == "-m":
                        start = 3
                    skip = False
                    for value in rest[start:]:
                        if value in ("&&", "||", ";", "|"):
                            break
                        if skip:
                            skip = False
                        elif value in ("-r", "--requirement", "-p", "--python", "-e", "--editable", "--index-url",
                                       "-i", "--group", "--target", "-t"):
                            skip = True
                        elif not value.startswith("-"):
                            add(value)
    if "pytest" not in found:
        found["pytest"] = DEFAULT_PYTEST
    return sorted(found.values(), key=_canonical)


def _interpreter(binary: Path) -> str:
    """The ELF program interpreter (dynamic loader) of ``binary``."""
    with open(binary, "rb") as fh:
        head = fh.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            raise BuildError(f"{binary} is not a 64-bit ELF program")
        fmt = "<" if head[5] == 1 else ">"
        phoff, = struct.unpack_from(fmt + "Q", head, 32)
        phentsize, phnum = struct.unpack_from(fmt + "HH", head, 54)
        for i in range(phnum):
            fh.seek(phoff + i * phentsize)
            p_type, _flags, p_offset, _vaddr, _paddr, p_filesz = struct.unpack(fmt + "IIQQQQ", fh.read(40))
            if p_type == 3:  # PT_INTERP
                fh.seek(p_offset)
                return fh.read(p_filesz).rstrip(b"\0").decode()
    raise BuildError(f"{binary} names no program interpreter")


def _layout(runtime: Path) -> tuple[str, str, str]:
    """``(loader, library dirs, python binary)`` as paths inside the runtime root."""
    version = PYTHON_OF[RUNTIME.release]
    python = f"/usr/bin/python{version}"
    loader = _interpreter(runtime / python.lstrip("/"))
    libc = sorted(runtime.glob("usr/lib/*/libc.so.6"))
    if not libc:
        raise BuildError(f"no libc.so.6 in {runtime}/usr/lib")
    arch = libc[0].parent.name
    return loader, f"/usr/lib/{arch}:/lib/{arch}", python


def _files_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(KIT_FILES.iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def build_kit(requirements: list[str], *, log: bool = True) -> Kit:
    """The kit holding ``requirements``, from the cache or built now (its runtime too)."""
    start = time.monotonic()
    runtime, runtime_seconds = build_base(RUNTIME, log=log)
    reqs = tuple(sorted(requirements, key=_canonical))
    key = hashlib.sha256(json.dumps({"runtime": RUNTIME.key(), "requirements": reqs, "kit": KIT_VERSION,
                                     "files": _files_digest()}).encode()).hexdigest()[:20]
    final = env_cache_dir() / "kits" / key
    built = False
    if not (final / "kit.json").is_file():
        with cache_lock(f"kit-{key}"):
            if not (final / "kit.json").is_file():
                _build(final, runtime, reqs, log=log)
                built = True
    seconds = time.monotonic() - start
    return Kit(final, runtime, reqs, PYTHON_OF[RUNTIME.release],
               round(seconds, 2) if built or runtime_seconds else 0.0)


def _build(final: Path, runtime: Path, reqs: tuple[str, ...], *, log: bool) -> None:
    loader, libs, python = _layout(runtime)
    final.parent.mkdir(parents=True, exist_ok=True)
    for stale in final.parent.glob(f".{final.name}-*"):  # a build killed half-way (we hold its lock)
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
    try:
        target = work / "kit"
        site = target / "lib" / "python3" / "dist-packages"
        (target / "bin").mkdir(parents=True)
        site.mkdir(parents=True)
        version = PYTHON_OF[RUNTIME.release]
        os.symlink(f"{RUNTIME_MOUNT}/usr/lib/python{version}", target / "lib" / f"python{version}")
        if log:
            print(f"building the verifier kit ({', '.join(reqs)})", flush=True)
        host_libs = ":".join(str(runtime) + part for part in libs.split(":"))
        argv = [str(runtime) + loader, "--library-path", host_libs, "--argv0", str(runtime / python.lstrip("/")),
                str(runtime / python.lstrip("/")), "-s", "-m", "pip", "install", "--target", str(site),
                "--no-warn-script-location", "--disable-pip-version-check", "--break-system-packages", *reqs]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            raise BuildError(f"installing the verifier's packages ({' '.join(reqs)}) failed with exit status "
                             f"{proc.returncode}:\n{(proc.stdout + proc.stderr)[-2000:]}")
        shutil.rmtree(site / "bin", ignore_errors=True)  # console scripts name the host's paths: unusable inside
        for name in ("jeval_verifier.py", "pytest.ini"):
            shutil.copyfile(KIT_FILES / name, target / name)
        inside_python = f"{RUNTIME_MOUNT}{python}"
        (target / "bin" / "python3").write_text(
            "#!/bin/sh\n# pytest-jeval's verifier Python (read-only; see docs/terminal.md)\n"
            f"exec {RUNTIME_MOUNT}{loader} --library-path {':'.join(RUNTIME_MOUNT + p for p in libs.split(':'))} "
            f"--argv0 {KIT_MOUNT}/bin/python3 {inside_python} -s \"$@\"\n")
        for alias in ("python", f"python{version}"):
            os.symlink("python3", target / "bin" / alias)
        for name in STANDINS:
            (target / "bin" / name).write_text(
                f"#!/bin/sh\nexec {KIT_MOUNT}/bin/python3 {KIT_MOUNT}/jeval_verifier.py {name} \"$@\"\n")
        for path in (target / "bin").iterdir():
            if not path.is_symlink():
                os.chmod(path, 0o755)
        (target / "kit.json").write_text(json.dumps({"requirements": list(reqs), "python": version,
                                                     "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                                                    indent=1) + "\n")
        for folder, dirs, files in os.walk(target):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)
            for name in files:
                file = os.path.join(folder, name)
                if not os.path.islink(file):
                    os.chmod(file, os.stat(file).st_mode | 0o444)
        os.chmod(target, 0o755)
        os.rename(target, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def kit_mounts(kit: Kit, notes: Path) -> list[Mount]:
    """The verifier's binds: the runtime and the kit read-only, the notes folder writable."""
    return [Mount(kit.runtime, RUNTIME_MOUNT), Mount(kit.path, KIT_MOUNT), Mount(notes, NOTES_MOUNT, writable=True)]


def verifier_path(image_path: str) -> str:
    """The verifier's ``PATH``: the kit's stand-ins first, then the image's."""
    return f"{KIT_MOUNT}/bin:{image_path}"

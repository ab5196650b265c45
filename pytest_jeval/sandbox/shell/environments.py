"""Building a task's environment from its Dockerfile without Docker, cached by content.

:func:`plan_environment` reads the Dockerfile and its context and refuses, with the
reason, what cannot be built here (before any build); :func:`build_environment` builds it
once and caches it.

How each instruction is carried out (docs/terminal.md has the full table):

- ``FROM``: a Debian root filesystem standing in for the image (:mod:`.images`); one ``FROM`` only.
- ``RUN``: in an :mod:`image sandbox <.image_sandbox>` over the layers so far, with the network,
  as ``USER``, in ``WORKDIR``, with ``ENV`` and ``ARG``; ``--mount=type=cache`` is ignored, other
  mounts are refused.
- ``COPY``/``ADD``: from the context (``.dockerignore`` honoured), wildcards, ``--chown``,
  ``--chmod``, heredocs; ``ADD`` unpacks local tar archives; URLs, git and ``--from`` are refused.
- ``WORKDIR``, ``ENV``, ``ARG``, ``USER``, ``SHELL``: as Docker does (variables substituted).
- ``CMD``, ``ENTRYPOINT``, ``EXPOSE``, ``LABEL``, ``HEALTHCHECK``, ``STOPSIGNAL``, ``MAINTAINER``,
  ``VOLUME``, ``ONBUILD``: not run (the harness starts no main process; Harbor does not either).

All the instruction's changes go into one layer over the shared base, so tasks on the same
base cost only their own changes on disk. A built environment lives in
``<cache>/environments/envs/<key>/`` (``layer/`` and ``meta.json``), where the key hashes the
base, the Dockerfile and every file of the context; a changed file builds anew, and a build
is renamed into place only when complete.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from pytest_jeval.sandbox.shell.dockerfile import (
    DockerfileError,
    Instruction,
    expand,
    parse_dockerfile,
    process_word,
    split_words,
)
from pytest_jeval.sandbox.shell.image_sandbox import Mount
from pytest_jeval.sandbox.shell.images import (
    ENV_UID_BASE,
    BaseImage,
    BuildError,
    UnsupportedBase,
    build_base,
    cache_lock,
    env_cache_dir,
    resolve_base,
    tree_bytes,
)

__all__ = ["BuiltEnvironment", "EnvironmentPlan", "EnvironmentRefused", "build_environment", "plan_environment"]

RECIPE_VERSION = 1
"""Bumped whenever the build steps change what a layer holds."""
BUILD_TIMEOUT = 1800.0
"""Seconds one ``RUN`` step may take unless the task says otherwise."""
_IGNORED = ("CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "HEALTHCHECK", "STOPSIGNAL", "MAINTAINER", "ONBUILD")
_TAR = re.compile(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2|tar\.xz|txz|tar\.zst)$")
_HEREDOC_WORD = re.compile(r"<<-?['\"]?[A-Za-z_][A-Za-z0-9_]*['\"]?")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://|^git@", re.IGNORECASE)
MOUNT_ROOT = "/jeval"
"""Where the builder binds its own folders during a step (removed from the layer afterwards)."""


class EnvironmentRefused(Exception):
    """A Dockerfile this builder cannot carry out here; the message is the reason (file and line)."""

    def __init__(self, message: str, kind: str = "unsupported-instruction") -> None:
        super().__init__(message)
        self.kind = kind
        """``unsupported-base``, ``unsupported-instruction`` or ``context`` (a missing or special file)."""


@dataclasses.dataclass(frozen=True)
class EnvironmentPlan:
    """A Dockerfile read and checked: what to build and what it is called."""

    dockerfile: Path
    context: Path
    instructions: tuple[Instruction, ...]
    base: BaseImage
    key: str
    """Hash of the base, the Dockerfile and the context's files: the cache folder's name."""
    notes: tuple[str, ...]
    """How the built environment differs from Docker's (the base's notes and the instructions not run)."""

    @property
    def path(self) -> Path:
        """``<cache>/envs/<key>``."""
        return env_cache_dir() / "envs" / self.key


@dataclasses.dataclass(frozen=True)
class BuiltEnvironment:
    """A built environment: the layers to stack and the image's final settings."""

    plan: EnvironmentPlan
    base_root: Path
    layer: Path
    env: tuple[tuple[str, str], ...]
    workdir: str
    user: str
    uid: int
    gid: int
    build_seconds: float
    """Seconds this call spent building (0.0 when both base and layer came from the cache)."""
    first_build_seconds: float
    """Seconds the layer took when it was built (from its ``meta.json``)."""
    layer_bytes: int
    base_bytes: int

    @property
    def lowers(self) -> tuple[Path, ...]:
        """The overlay's read-only layers, top first."""
        return (self.layer, self.base_root)

    @property
    def cached(self) -> bool:
        """True when nothing was built by this call."""
        return self.build_seconds == 0.0


# ------------------------------------------------------------------------------------------------ plan

def _dockerignore(context: Path) -> list[tuple[bool, str]]:
    path = context / ".dockerignore"
    if not path.is_file():
        return []
    rules = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = os.path.normpath(line.lstrip("!").strip().lstrip("/"))
        rules.append((negate, pattern))
    return rules


def _ignored(rel: str, rules: list[tuple[bool, str]]) -> bool:
    ignored = False
    for negate, pattern in rules:
        regex = fnmatch.translate(pattern).replace(".*", "[^/]*").replace("[^/]*[^/]*", ".*")
        if re.match(regex, rel) or any(re.match(regex, str(parent)) for parent in PurePosixPath(rel).parents
                                       if str(parent) != "."):
            ignored = not negate
    return ignored


def context_files(context: Path) -> list[str]:
    """The context's files and folders (relative, sorted) that ``.dockerignore`` keeps; links refused."""
    rules = _dockerignore(context)
    kept: list[str] = []
    for folder, dirs, files in os.walk(context):
        dirs.sort()
        for name in sorted(dirs + files):
            full = Path(folder) / name
            rel = full.relative_to(context).as_posix()
            if _ignored(rel, rules):
                continue
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(full)
                raise EnvironmentRefused(f"{full}: a link ({target}) in the build context is not supported", "context")
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                raise EnvironmentRefused(f"{full}: a special file in the build context", "context")
            kept.append(rel)
    return kept


def _context_digest(context: Path, files: list[str]) -> str:
    digest = hashlib.sha256()
    for rel in files:
        full = context / rel
        mode = os.lstat(full).st_mode
        digest.update(f"{rel}\0{stat.S_IMODE(mode):o}\0{'d' if stat.S_ISDIR(mode) else 'f'}\0".encode())
        if stat.S_ISREG(mode):
            with open(full, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def _refuse(ins: Instruction, path: Path, why: str) -> EnvironmentRefused:
    return EnvironmentRefused(f"{path}:{ins.line}: {ins.keyword} {why}")


def plan_environment(dockerfile: Path, context: Path | None = None) -> EnvironmentPlan:
    """Read and check a Dockerfile; :class:`~.dockerfile.DockerfileError` for a malformed one,
    :class:`EnvironmentRefused` (with the reason) for one this builder cannot build."""
    dockerfile = Path(dockerfile)
    context = Path(context) if context is not None else dockerfile.parent
    instructions = parse_dockerfile(dockerfile)
    args: dict[str, str] = {}
    base: BaseImage | None = None
    notes: list[str] = []
    for ins in instructions:
        if ins.keyword == "ARG" and base is None:
            for word in split_words(ins.args, args):
                name, _, value = word.partition("=")
                args[name] = value
        elif ins.keyword == "FROM":
            if base is not None:
                raise _refuse(ins, dockerfile, "again: multi-stage builds are not supported")
            if ins.flag("platform") not in (None, "linux/amd64", "$BUILDPLATFORM", "$TARGETPLATFORM"):
                raise _refuse(ins, dockerfile, f"--platform={ins.flag('platform')} is not supported")
            words = split_words(ins.args, args)
            if not words:
                raise DockerfileError(dockerfile, ins.line, "FROM requires an image")
            try:
                base = resolve_base(words[0])
            except UnsupportedBase as exc:
                raise EnvironmentRefused(f"{dockerfile}:{ins.line}: {exc}", "unsupported-base") from None
        elif base is None:
            raise DockerfileError(dockerfile, ins.line, f"{ins.keyword} before FROM (only ARG may come first)")
        elif ins.keyword == "RUN":
            for mount in ins.flag_values("mount"):
                if "type=cache" not in mount:
                    raise _refuse(ins, dockerfile, f"--mount={mount} is not supported (only type=cache)")
            if ins.flag("security") not in (None, "sandbox"):
                raise _refuse(ins, dockerfile, f"--security={ins.flag('security')} is not supported")
        elif ins.keyword in ("COPY", "ADD"):
            if ins.flag("from") is not None:
                raise _refuse(ins, dockerfile, f"--from={ins.flag('from')} is not supported (no other images)")
            sources = list(ins.exec_form or split_words(ins.args))[:-1]
            if ins.keyword == "ADD" and any(_URL.match(s) for s in sources):
                raise _refuse(ins, dockerfile, "of a URL or git repository is not supported (download it in a RUN "
                              "step instead)")
            if not sources and not ins.heredocs:
                raise DockerfileError(dockerfile, ins.line, f"{ins.keyword} requires a source and a destination")
        elif ins.keyword == "VOLUME":
            notes.append(f"VOLUME {ins.args} is part of the environment's file system (no volume is made)")
    if base is None:
        raise DockerfileError(dockerfile, 1, "no FROM instruction")
    files = context_files(context)
    recipe = json.dumps({"base": base.key(), "dockerfile": dockerfile.read_text(encoding="utf-8"),
                         "context": _context_digest(context, files), "recipe": RECIPE_VERSION}, sort_keys=True)
    key = hashlib.sha256(recipe.encode()).hexdigest()[:20]
    return EnvironmentPlan(dockerfile, context, tuple(instructions), base, key, (*base.notes, *notes))


# ------------------------------------------------------------------------------------------------ build

@dataclasses.dataclass
class _State:
    env: dict[str, str]
    args: dict[str, str]
    workdir: str = "/"
    user: str = ""
    shell: tuple[str, ...] = ("/bin/sh", "-c")

    def variables(self) -> dict[str, str]:
        return {**self.args, **self.env}


def build_environment(plan: EnvironmentPlan, *, log: bool = True, timeout: float = BUILD_TIMEOUT) -> BuiltEnvironment:
    """The built environment of ``plan``, from the cache or built now (:class:`~.images.BuildError` when a step
    fails, naming the instruction, its line and the end of its output)."""
    start = time.monotonic()
    base_root, base_seconds = build_base(plan.base, log=log)
    final = plan.path
    built = False
    if not (final / "meta.json").is_file():
        with cache_lock(f"env-{plan.key}"):
            if not (final / "meta.json").is_file():
                _build(plan, base_root, final, log=log, timeout=timeout)
                built = True
    meta = json.loads((final / "meta.json").read_text())
    seconds = time.monotonic() - start
    base_meta = json.loads((base_root / ".jeval-base.json").read_text())
    return BuiltEnvironment(
        plan=plan, base_root=base_root, layer=final / "layer", env=tuple((k, v) for k, v in meta["env"]),
        workdir=meta["workdir"], user=meta["user"], uid=int(meta["uid"]), gid=int(meta["gid"]),
        build_seconds=round(seconds, 2) if built or base_seconds else 0.0,
        first_build_seconds=float(meta["build_seconds"]), layer_bytes=int(meta["layer_bytes"]),
        base_bytes=int(base_meta["bytes"]))


def _build(plan: EnvironmentPlan, base_root: Path, final: Path, *, log: bool, timeout: float) -> None:
    from pytest_jeval.sandbox.shell.image_sandbox import RunSpec, copy_plain, run_in_image

    final.parent.mkdir(parents=True, exist_ok=True)
    for stale in final.parent.glob(f".{plan.key}-*"):  # a build killed half-way (we hold the key's lock)
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{plan.key}-", dir=final.parent))
    os.chmod(work, 0o711)
    if log:
        print(f"building the environment of {plan.dockerfile} ({plan.key})", flush=True)
    start = time.monotonic()
    try:
        parts = {name: work / name for name in ("layer", "work", "merged", "context", "heredoc")}
        for path in parts.values():
            path.mkdir(mode=0o755)
            os.chown(path, ENV_UID_BASE, ENV_UID_BASE)
        for rel in context_files(plan.context):
            source, target = plan.context / rel, parts["context"] / rel
            if source.is_dir():
                target.mkdir(mode=0o755, exist_ok=True)
                os.chown(target, ENV_UID_BASE, ENV_UID_BASE)
            else:
                copy_plain(source, target)
        network_mounts, network_env = _host_network(work)
        state = _State(env=dict(plan.base.env), args={})
        for ins in plan.instructions:
            argv, mounts, network = _step(ins, state, plan, parts["heredoc"])
            if argv is None:
                continue
            uid, gid = (0, 0) if ins.keyword in ("COPY", "ADD", "WORKDIR") else _ids(state.user, parts["layer"],
                                                                                     base_root, plan, ins)
            spec = RunSpec((base_root,), parts["layer"], parts["work"], parts["merged"], tuple(argv),
                           cwd=state.workdir if ins.keyword == "RUN" else "/",
                           env={**_run_env(state, uid), **(network_env if network else {})}
                           if ins.keyword == "RUN" else dict(state.env),
                           uid=uid, gid=gid, network=network,
                           mounts=(Mount(parts["context"], f"{MOUNT_ROOT}/context"),
                                   Mount(parts["heredoc"], f"{MOUNT_ROOT}/heredoc"),
                                   *(network_mounts if network else ()), *mounts),
                           hostname="jeval-build")
            outcome = run_in_image(spec, timeout=timeout)
            _clean_mount_points(parts["layer"], base_root)
            if outcome.timed_out or outcome.returncode != 0:
                what = f"timed out after {timeout:g} s" if outcome.timed_out else \
                    f"failed with exit status {outcome.returncode}"
                tail = (outcome.stdout[-1500:] + "\n" + outcome.stderr[-1500:]).strip()
                raise BuildError(f"{plan.dockerfile}:{ins.line}: {ins.raw[:200]} {what}:\n{tail}")
        uid, gid = _ids(state.user, parts["layer"], base_root, plan, None)
        seconds = time.monotonic() - start
        target = work / "final"
        target.mkdir()
        os.rename(parts["layer"], target / "layer")
        meta = {"key": plan.key, "dockerfile": str(plan.dockerfile), "base": plan.base.name,
                "env": list(state.env.items()), "workdir": state.workdir, "user": state.user, "uid": uid, "gid": gid,
                "build_seconds": round(seconds, 2), "layer_bytes": tree_bytes(target / "layer"),
                "built_by_pid": os.getpid(), "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        os.chmod(target, 0o755)
        os.rename(target, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if log:
        print(f"built {plan.key} in {seconds:.0f} s", flush=True)


def _step(ins: Instruction, state: _State, plan: EnvironmentPlan,
          heredoc_dir: Path) -> tuple[list[str] | None, tuple[Mount, ...], bool]:
    """Apply ``ins`` to ``state``; the command line to run for it (None: nothing to run), extra mounts, network."""
    variables = state.variables()
    try:
        if ins.keyword == "ARG":
            for word in split_words(ins.args, variables):
                name, has, value = word.partition("=")
                state.args[name] = value if has else state.args.get(name, "")
            return None, (), False
        if ins.keyword == "ENV":
            words = split_words(ins.args, variables)
            if words and "=" not in words[0]:  # legacy: ENV key value with spaces
                key, _, value = ins.args.strip().partition(" ")
                state.env[key] = process_word(value.strip(), variables)
            else:
                for word in words:
                    key, has, value = word.partition("=")
                    if not has:
                        raise DockerfileError(plan.dockerfile, ins.line, f"ENV {word}: expected key=value")
                    state.env[key] = value
            return None, (), False
        if ins.keyword == "WORKDIR":
            path = process_word(ins.args, variables)
            state.workdir = os.path.normpath(os.path.join(state.workdir, path))
            return ["/bin/mkdir", "-p", state.workdir], (), False
        if ins.keyword == "USER":
            state.user = process_word(ins.args, variables)
            return None, (), False
        if ins.keyword == "SHELL":
            state.shell = tuple(ins.exec_form or ())
            return None, (), False
        if ins.keyword == "RUN":
            if ins.exec_form is not None:
                return list(ins.exec_form), (), ins.flag("network") != "none"
            script = ins.args
            if ins.heredocs and not _HEREDOC_WORD.sub("", script).strip():
                script = ins.heredocs[0].body  # RUN <<EOF: the here-document is the script
            else:
                for doc in ins.heredocs:  # a command reading a here-document: the shell reads it as written
                    script = f"{script}\n{doc.body}{doc.name}"
            return [*state.shell, script], (), ins.flag("network") != "none"
        if ins.keyword in ("COPY", "ADD"):
            return _copy_command(ins, state, variables, plan, heredoc_dir), (), False
        return None, (), False  # FROM, and the instructions that are recorded only
    except ValueError as exc:
        if isinstance(exc, DockerfileError):
            raise
        raise DockerfileError(plan.dockerfile, ins.line, f"{ins.keyword}: {exc}") from None


def _copy_command(ins: Instruction, state: _State, variables: Mapping[str, str], plan: EnvironmentPlan,
                  heredoc_dir: Path) -> list[str]:
    """A shell script (run as container root) that copies the sources into the layer."""
    words = list(ins.exec_form) if ins.exec_form is not None else split_words(ins.args, variables)
    dest = words[-1]
    if not dest.startswith("/"):
        dest = os.path.join(state.workdir, dest)
    lines = ["set -e"]
    sources: list[str] = []
    for doc in ins.heredocs:
        name = f"{ins.line}-{doc.name}"
        (heredoc_dir / name).write_text(expand(doc.body, variables) if doc.expand else doc.body)
        os.chown(heredoc_dir / name, ENV_UID_BASE, ENV_UID_BASE)
        sources.append(f"{MOUNT_ROOT}/heredoc/{name}")
    words = [w for w in words if not _HEREDOC_WORD.fullmatch(w)]
    for pattern in words[:-1]:
        rel = os.path.normpath(pattern.lstrip("/"))
        if rel.startswith(".."):
            raise EnvironmentRefused(f"{plan.dockerfile}:{ins.line}: {ins.keyword} {pattern} lies outside the "
                                     "build context")
        matches = sorted(str(p.relative_to(plan.context)) for p in plan.context.glob(rel)) if rel != "." else ["."]
        kept = set(context_files(plan.context)) | {"."}
        matches = [m for m in matches if m in kept]
        if not matches:
            raise EnvironmentRefused(f"{plan.dockerfile}:{ins.line}: {ins.keyword} {pattern}: no such file in the "
                                     f"build context {plan.context}")
        sources.extend(f"{MOUNT_ROOT}/context/{m}" for m in matches)
    into_dir = dest.endswith("/") or len(sources) > 1
    owner = ins.flag("chown")
    mode = ins.flag("chmod")
    q = _quote
    for src in sources:
        is_dir = src.startswith(f"{MOUNT_ROOT}/context") and (plan.context / src[len(MOUNT_ROOT) + 9:]).is_dir()
        if ins.keyword == "ADD" and _TAR.search(src) and not is_dir:
            lines.append(f"mkdir -p {q(dest)} && tar -xf {q(src)} -C {q(dest)} --no-same-owner")
            continue
        if is_dir:
            target_list = f"$(cd {q(src)} && ls -A)"
            lines.append(f"new=; [ -e {q(dest)} ] || new=1")
            lines.append(f"mkdir -p {q(dest)} && cp -a --no-preserve=ownership {q(src)}/. {q(dest)}/")
            if owner:  # a folder COPY makes belongs to --chown too
                lines.append(f"[ -z \"$new\" ] || chown {q(owner)} {q(dest)}")
            targets = f"for f in {target_list}; do echo {q(dest)}/\"$f\"; done"
        elif into_dir or dest.endswith("/"):
            name = os.path.basename(src)
            lines.append(f"mkdir -p {q(dest)} && cp -a --no-preserve=ownership {q(src)} {q(dest.rstrip('/'))}/")
            targets = f"echo {q(dest.rstrip('/') + '/' + name)}"
        else:
            lines.append(f"if [ -d {q(dest)} ]; then cp -a --no-preserve=ownership {q(src)} {q(dest)}/; else "
                         f"mkdir -p \"$(dirname {q(dest)})\" && cp -a --no-preserve=ownership {q(src)} {q(dest)}; fi")
            targets = f"if [ -d {q(dest)} ] && [ ! -d {q(src)} ]; then echo {q(dest)}/{q(os.path.basename(src))}; " \
                      f"else echo {q(dest)}; fi"
        fixes = []
        if owner:
            fixes.append(f"chown -R {q(owner)} \"$t\"")
        if mode:
            fixes.append(f"chmod -R {q(mode)} \"$t\"")
        if fixes:
            lines.append(f"{targets} | while IFS= read -r t; do {'; '.join(fixes)}; done")
    return ["/bin/sh", "-c", "\n".join(lines)]


CA_VARIABLES = ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
                "NODE_EXTRA_CA_CERTS")
"""Set for ``RUN`` steps with the network to the host's CA bundle (a network that intercepts TLS)."""
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
"""Passed from the host to ``RUN`` steps, as Docker passes them as predefined build arguments."""


def _host_network(work: Path) -> tuple[tuple[Mount, ...], dict[str, str]]:
    """What a ``RUN`` step with the network gets from the host: its CA bundle (bound read-only, named by
    :data:`CA_VARIABLES`; the image's own trust store is not changed) and its proxy variables."""
    env = {name: os.environ[name] for name in PROXY_VARIABLES if os.environ.get(name)}
    candidates = [os.environ.get(name, "") for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT")]
    bundle = next((Path(c) for c in [*candidates, "/etc/ssl/certs/ca-certificates.crt"] if c and Path(c).is_file()),
                  None)
    if bundle is None:
        return (), env
    folder = work / "host-ca"
    folder.mkdir(mode=0o755)
    shutil.copyfile(bundle, folder / "ca-certificates.crt")
    os.chmod(folder / "ca-certificates.crt", 0o644)
    target = f"{MOUNT_ROOT}/host-ca/ca-certificates.crt"
    return (Mount(folder, f"{MOUNT_ROOT}/host-ca"),), {**env, **{name: target for name in CA_VARIABLES}}


def _run_env(state: _State, uid: int) -> dict[str, str]:
    """A ``RUN`` step's environment: ``ARG`` and ``ENV`` values, and ``HOME`` as Docker sets it for root."""
    env = state.variables()
    if uid == 0:
        env.setdefault("HOME", "/root")
    return env


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _ids(user: str, layer: Path, base_root: Path, plan: EnvironmentPlan, ins: Instruction | None) -> tuple[int, int]:
    """The uid and gid of ``USER`` (a name, a uid, ``name:group``), read from the image's passwd and group."""
    if not user or user in ("root", "0", "0:0", "root:root"):
        return 0, 0
    name, _, group = user.partition(":")

    def lookup(table: str, key: str) -> tuple[int, int] | None:
        if key.isdigit():
            return int(key), int(key)
        for root in (layer, base_root):
            path = root / "etc" / table
            if path.is_file():
                for line in path.read_text(errors="replace").splitlines():
                    fields = line.split(":")
                    if fields[0] == key and len(fields) > 3:
                        return int(fields[2]), int(fields[3])
                return None
        return None

    found = lookup("passwd", name)
    if found is None:
        line = ins.line if ins is not None else 0
        raise BuildError(f"{plan.dockerfile}:{line}: USER {user}: no such user in the image's /etc/passwd")
    uid, gid = found
    if group:
        grp = lookup("group", group)
        if grp is None:
            raise BuildError(f"{plan.dockerfile}: USER {user}: no such group in the image's /etc/group")
        gid = grp[0] if not group.isdigit() else int(group)
    return uid, gid


def _clean_mount_points(layer: Path, base_root: Path) -> None:
    """Remove the empty mount points bubblewrap left in the layer for the builder's binds."""
    top = layer / MOUNT_ROOT.strip("/")
    if top.is_dir() and not (base_root / MOUNT_ROOT.strip("/")).exists():
        for folder, dirs, files in os.walk(top, topdown=False):
            if files:
                return  # a RUN step put something there: keep it
            for name in dirs:
                os.rmdir(os.path.join(folder, name))
        os.rmdir(top)

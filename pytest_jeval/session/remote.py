"""Remote pytest-xdist workers (``--tx socket=HOST:PORT``, ``--tx ssh=...``): what the controller hands them.

A remote worker starts in its own folder (xdist's ``chdir``, by default
``pyexecnetcache`` under the execnet server's folder), not in the controller's: a
relative ``--jeval-config`` would name another file there. The controller sends
each worker the suite's absolute path (``workerinput["jeval_suite"]``), which the
worker loads instead (:func:`suite_option`); the file must exist at that path on the
worker (a shared path, or the same checkout). Under ``--jeval-resume`` a remote
worker cannot read the finished records either (they are in the controller's output
dir): the controller sends it the ones it read (``workerinput["jeval_resumed"]``,
:func:`shipped_resumed`), so no finished sample is asked again. docs/remote-workers.md
has the rules.

:func:`check_remote_specs` (controller, before xdist starts any worker) turns two
xdist traps into a usage error or a safe default:

* xdist rewrites every command-line argument that names an existing path relative
  to its rsync roots for a remote worker, and raises ``ValueError`` (an internal
  error) for one outside them, such as the ``suite.toml`` of ``--jeval-config suite.toml``
  written as two arguments (the README's form). An option's value is not a path to
  collect, so each such pair is sent as one argument (``--jeval-config=suite.toml``,
  :func:`joined_option_values`); a path given to collect is a usage error here.
* execnet's socket server runs the worker in its own process, so a crashed socket
  worker cannot be replaced (xdist's reconnect fails with an internal error), and a
  worker that fails on start is replaced forever (xdist sets no restart limit for
  ``--tx``): with a ``socket=`` spec and no ``--max-worker-restart``, the limit is 0.
* The bundled local model's server listens on the controller's 127.0.0.1: a worker
  on another host cannot reach it, which is a usage error.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_jeval.session.keys import plan_key

if TYPE_CHECKING:
    from pytest_jeval.results.resume import Resumed

SUITE_KEY = "jeval_suite"
"""The ``workerinput`` key of the suite's absolute path."""
RESUMED_KEY = "jeval_resumed"
"""The ``workerinput`` key of the finished records a remote worker resumes from."""


def suite_option(config: pytest.Config, suite: str | None) -> str | None:
    """The suite a process loads: on an xdist worker the controller's absolute path, else ``suite``."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get(SUITE_KEY):
        return str(workerinput[SUITE_KEY])
    return suite


def shipped_resumed(config: pytest.Config) -> Resumed | None:
    """On a remote xdist worker under ``--jeval-resume``: the finished records the controller sent, else None."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    shipped = None if workerinput is None else workerinput.get(RESUMED_KEY)
    if shipped is None:
        return None
    return {(bench, model): records for bench, model, records in shipped}


class RemoteWorkersPlugin:
    """Registered on the controller: what each xdist worker is sent (the suite's path; resumed records)."""

    def __init__(self, suite_path: str) -> None:
        self.suite_path = suite_path

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist (controller): the suite's absolute path, for a worker whose folder is not the controller's;
        to a remote worker under ``--jeval-resume``, the finished records the results writer read."""
        node.workerinput[SUITE_KEY] = self.suite_path
        spec = node.gateway.spec
        config: pytest.Config = node.config
        if (not spec.popen or spec.chdir) and config.getoption("jeval_resume"):
            from pytest_jeval.session.keys import runtime_key

            resumed = config.stash[runtime_key].resumed or {}
            node.workerinput[RESUMED_KEY] = [[bench, model, records] for (bench, model), records in resumed.items()]


def _remote_specs(config: pytest.Config) -> list[Any]:
    """The ``--tx`` specs of workers that do not share the controller's folder (xdist's rule)."""
    tx: list[str] = config.getoption("tx", None) or []
    if not tx:
        return []
    import execnet

    specs = [execnet.XSpec(spec.split("*", 1)[1] if spec.split("*", 1)[0].isdigit() else spec) for spec in tx]
    return [spec for spec in specs if not spec.popen or spec.chdir]


LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def _on_this_host(spec: Any) -> bool:
    """Whether a remote spec's worker runs on the controller's host (and so reaches its 127.0.0.1)."""
    if spec.via or getattr(spec, "installvia", None):
        return False
    if spec.popen:
        return True
    if spec.socket:
        return str(spec.socket).rsplit(":", 1)[0].strip("[]") in LOOPBACK
    if spec.ssh:
        return str(spec.ssh).split()[-1].rsplit("@", 1)[-1] in LOOPBACK
    return False


def check_remote_specs(config: pytest.Config, *, local_model: bool = False) -> None:
    """Controller: path arguments that xdist cannot send, the restart limit of socket workers, and the
    bundled local model (``local_model``: the suite uses it), whose server listens on the controller's
    127.0.0.1, which a worker on another host cannot reach."""
    remote = _remote_specs(config)
    if not remote:
        return
    elsewhere = [spec._spec for spec in remote if not _on_this_host(spec)]
    if local_model and elsewhere:
        raise pytest.UsageError(
            f"jeval: the bundled local model is served on the controller's 127.0.0.1, which the worker of "
            f"--tx {elsewhere[0]} cannot reach: run it with -n N on one host, or serve the model where "
            "the workers reach it and give its base_url (docs/remote-workers.md)")
    if not (config.getoption("rsyncdir", None) or config.getini("rsyncdirs")):
        join_option_values(config)
        paths = [arg for arg in map(str, config.invocation_params.args)
                 if _exists(config.invocation_params.dir / arg.split("::")[0])]
        if paths:
            raise pytest.UsageError(
                f"jeval: remote xdist workers (--tx {remote[0]._spec}) cannot be sent path arguments "
                f"({', '.join(paths)}): select samples with -k, not with paths to collect (an option's value, "
                "as in --jeval-config suite.toml, is sent as it is; docs/remote-workers.md)")
    if config.getoption("maxworkerrestart", None) is None and any(spec.socket for spec in remote):
        config.option.maxworkerrestart = "0"  # a crashed socket worker cannot be replaced


def joined_option_values(args: Sequence[str], positional: Sequence[str], where: Path) -> list[str]:
    """``args`` with each option value that names an existing path joined to its option
    (``--jeval-config suite.toml`` -> ``--jeval-config=suite.toml``, ``-c x.ini`` -> ``-cx.ini``), the
    form xdist sends a remote worker unchanged. A path is an option's value when it follows an option
    (``-x``, ``--name``, without ``=``, before any ``--``) and pytest did not take it as a collection
    argument (``positional``: a path after a flag, ``--lf suite.toml``, stays a path to collect)."""
    candidate: list[bool] = []
    separator = False
    for i, arg in enumerate(args):
        previous = args[i - 1] if i else ""
        candidate.append(not separator and previous.startswith("-") and previous != "--" and "=" not in previous
                         and not arg.startswith("-") and _exists(where / arg.split("::")[0]))
        separator = separator or arg == "--"
    # pytest's collection arguments not written where an option's value could stand are among the candidates
    left = collections.Counter(positional)
    left.subtract(arg for arg, maybe in zip(args, candidate) if not maybe)
    out: list[str] = []
    for arg, maybe in zip(args, candidate):
        if maybe and left[arg] > 0:
            left[arg] -= 1
        elif maybe:
            out[-1] = f"{out[-1]}={arg}" if out[-1].startswith("--") else f"{out[-1]}{arg}"
            continue
        out.append(arg)
    return out


def join_option_values(config: pytest.Config) -> None:
    """Replace ``config.invocation_params`` (what xdist sends each worker) by its arguments with every
    option value that names a path joined to its option (:func:`joined_option_values`)."""
    params = config.invocation_params
    args = joined_option_values([str(a) for a in params.args], [str(a) for a in config.args], params.dir)
    if args != list(params.args):
        config.invocation_params = pytest.Config.InvocationParams(args=args, plugins=params.plugins, dir=params.dir)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def install(config: pytest.Config) -> None:
    """The controller checks what xdist can send its workers and hands them the suite's path."""
    if hasattr(config, "workerinput"):
        return
    plan = config.stash[plan_key]
    check_remote_specs(config, local_model=plan.needs_local_model)
    config.pluginmanager.register(RemoteWorkersPlugin(str(plan.path)), "jeval-remote-workers")

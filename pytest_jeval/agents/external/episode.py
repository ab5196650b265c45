"""One external-agent episode: a workspace, a fresh home, a recording proxy, the agent as a subprocess.

The agent's environment is built from scratch (``PATH``, ``HOME``, ``LANG``,
``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` = the episode's dummy key, ``JEVAL_MODEL``, plus
the adapter's own variables); the prompt is in a file. The agent runs in its sandbox
(:mod:`pytest_jeval.sandbox.confined`: its own user, PID, network and mount namespaces with
no capability, a file system built for it, a network that reaches only its proxy, a uid and
a cgroup of its own), so it can see no process, file or network of the harness, and every
process it starts dies with it. At the episode time limit the whole sandbox is killed
(``time_limit``); at the end of every episode any process still carrying the episode's dummy
key in its environment is killed too and counted (``survivors``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_jeval.agents.loop import Limits, cut_output
from pytest_jeval.agents.tool import NotRunnable
from pytest_jeval.core.chat import Messages, Reply
from pytest_jeval.core.episode import Episode, ToolCallRecord

if TYPE_CHECKING:
    from pytest_jeval.agents.external.base import AgentInvocation, ExternalAgent
    from pytest_jeval.agents.setup import EpisodeSetup
    from pytest_jeval.calls.scheduler import Scheduler
    from pytest_jeval.core.chat import ChatRequest, Endpoint
    from pytest_jeval.core.sample import Sample
    from pytest_jeval.sandbox.confined import AgentHost

MAX_CAPTURE = 1 << 20
"""Bytes of each of stdout and stderr kept while the agent runs (head and tail halves)."""
MAX_KEPT = 16_000
"""Characters of each stream kept in the trajectory (head and tail)."""
STDERR_TAIL = 2_000
"""Characters of stderr quoted in the error of an agent that failed."""


# -- containment -------------------------------------------------------------------------

NO_PIDNS_ENV = "JEVAL_EXTERNAL_NO_PIDNS"
"""Set to ``1`` to run external agents without their sandbox (process group and session only)."""


def contained() -> bool:
    """True when external agents run in their sandbox (:mod:`pytest_jeval.sandbox.confined`)."""
    return os.environ.get(NO_PIDNS_ENV) != "1"


def containment_problem() -> str | None:
    """Why external agents cannot be contained here (no working bubblewrap), or None."""
    if not contained():
        return None
    from pytest_jeval.sandbox.confined import confinement_problem

    problem = confinement_problem()
    if problem is None:
        return None
    return (f"{problem}; without its sandbox the agent could read the harness's keys, files and network. Install "
            f"bubblewrap (apt-get install -y bubblewrap), or set {NO_PIDNS_ENV}=1 to accept process-group "
            "containment only")


def containment() -> str:
    """``bwrap`` (the agent's sandbox) or ``group`` (process group and session only)."""
    return "bwrap" if contained() else "group"


def processes_with(marker: str) -> list[int]:
    """PIDs of the processes (other than this one) whose environment contains ``marker``."""
    needle = marker.encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                if needle in fh.read():
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


async def kill_marked(marker: str, settle: float = 0.5) -> int:
    """Kill every live process whose environment carries ``marker``; how many were left.

    Processes that are already dying (a PID namespace being torn down) get ``settle``
    seconds to go before they are counted.
    """
    deadline = time.monotonic() + settle
    while True:
        pids = [pid for pid in processes_with(marker) if _alive(pid)]
        if not pids or time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.05)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# -- output capture ----------------------------------------------------------------------

@dataclasses.dataclass
class Capture:
    """One output stream: its head and its tail up to :data:`MAX_CAPTURE` bytes, and its length."""

    limit: int = MAX_CAPTURE
    head: bytearray = dataclasses.field(default_factory=bytearray)
    tail: bytearray = dataclasses.field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        """Keep what fits."""
        self.total += len(chunk)
        half = self.limit // 2
        room = half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > half:
                del self.tail[: len(self.tail) - half]

    @property
    def truncated(self) -> bool:
        """True when bytes were dropped."""
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        """The kept bytes as text (a cut is marked)."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if self.truncated:
            return f"{head}\n[... {self.total - len(self.head) - len(self.tail)} bytes cut ...]\n{tail}"
        return head + tail


async def _drain(stream: asyncio.StreamReader | None, capture: Capture) -> None:
    if stream is None:
        return
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        capture.add(chunk)


# -- the episode -------------------------------------------------------------------------

def content_text(content: Any) -> str:
    """The text of a message's ``content``: a string, or the ``text`` of its parts ('' otherwise)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return ""


def prompt_text(messages: Messages) -> str:
    """The text of the episode's opening messages, as the agent's prompt file holds it."""
    parts = [content_text(m.get("content")) for m in messages]
    return "\n\n".join(p for p in parts if p)


def agent_environment(*, home: Path, base_url: str, key: str, model: str,
                      extra: dict[str, str]) -> dict[str, str]:
    """The agent's whole environment: built from scratch, nothing secret inherited."""
    env = {
        "PATH": os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),  # the rest of the file system, /tmp included, is read-only to the agent
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": key,
        "JEVAL_MODEL": model,
    }
    env.update(extra)
    return env


def conversation_tool_calls(messages: Messages) -> list[ToolCallRecord]:
    """The tool calls of a recorded conversation, each with the ``role=tool`` result the agent sent back."""
    results = {str(m.get("tool_call_id")): content_text(m.get("content"))
               for m in messages if m.get("role") == "tool"}
    records = []
    turn = 0
    for m in messages:
        if m.get("role") != "assistant":
            continue
        turn += 1
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            call_id = str(call.get("id") or "")
            arguments = str(fn.get("arguments") or "")
            records.append(ToolCallRecord(id=call_id, name=str(fn.get("name") or ""), arguments=arguments,
                                          turn=turn, parsed=_parse(arguments), result=results.get(call_id, ""),
                                          error=None if call_id in results else "no result in the conversation"))
    return records


def _parse(raw: str) -> dict[str, Any] | None:
    from pytest_jeval.core import jsonsafe

    try:
        value = jsonsafe.loads(raw) if raw.strip() else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def run_external_episode(setup: EpisodeSetup, sample: Sample, scheduler: Scheduler, endpoint: Endpoint,
                               *, agent: ExternalAgent | None = None) -> Episode:
    """Run one sample with the benchmark's external agent behind a recording proxy; the finished episode.

    The episode's last reply is the agent's final answer (``answer_from`` of its
    invocation), so the ``response`` and ``episode`` fixtures work as for the agent backend.
    """
    from pytest_jeval.agents.external.proxy import RecordingProxy
    from pytest_jeval.agents.setup import nonce_of
    from pytest_jeval.agents.workspace import make_workspace, remove_workspace

    model_id = setup.model
    spec = setup.spec
    agent = agent or setup.external
    if agent is None:
        raise ValueError(f"{setup.benchmark}: no external agent to run")
    limits = setup.limits
    messages = setup.first_messages(sample)
    nonce = nonce_of(sample)
    attachments: Sequence[Any] = spec.attachments(sample) if spec.attachments is not None else ()

    def build(conversation: Messages, options: dict[str, Any]) -> ChatRequest:
        return setup.request(conversation, nonce=nonce, **options)

    async def forward(request: ChatRequest) -> Reply:
        reply = await asyncio.wrap_future(scheduler.submit(endpoint, request))
        return dataclasses.replace(reply, sent=tuple(request.sent().items()))

    proxy = RecordingProxy(model=model_id, limits=limits, forward=forward, build=build,
                           max_tokens=setup.settings.max_tokens)
    workspace = await asyncio.to_thread(make_workspace, list(attachments))
    home = await asyncio.to_thread(make_workspace)
    sockets: str | None = None
    started = time.monotonic()
    state: Any = None
    host: AgentHost | None = None
    process: _Process | None = None
    try:
        if spec.workspace_environment and spec.environment is not None:  # the agent works in what it prepares
            try:
                state = await asyncio.to_thread(spec.environment, sample, Path(workspace))
            except NotRunnable as exc:  # nothing to run on this machine: no model call
                raise _NotRun(str(exc)) from None
        if spec.external_host is not None:  # the agent runs inside the task's environment
            host = spec.external_host(state)
            if host is None:
                raise ValueError("this task's environment cannot hold an external agent")
        sockets = await asyncio.to_thread(_socket_dir) if contained() or host is not None else None
        if sockets is not None:
            from pytest_jeval.sandbox.confined import RELAY_PORT

            await proxy.start(unix_path=os.path.join(sockets, "proxy.sock"))
            base_url = f"http://127.0.0.1:{RELAY_PORT}/v1"
        else:
            base_url = await proxy.start()
        (Path(home) / "prompt.md").write_text(prompt_text(messages), encoding="utf-8")
        (Path(home) / "tmp").mkdir(mode=0o700, exist_ok=True)  # the agent's TMPDIR
        seen_home = Path(host.home if host is not None else home)  # where the agent sees its home and workspace
        seen_workspace = Path(host.workdir if host is not None else workspace)
        invocation = agent.invocation(prompt_file=seen_home / "prompt.md", workspace=seen_workspace, home=seen_home,
                                      model=model_id, base_url=base_url, api_key=proxy.key)
        for rel, content in invocation.files.items():
            target = (Path(home) / rel).resolve()
            if Path(home).resolve() not in target.parents:
                raise ValueError(f"the agent's file {rel!r} lies outside its home")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        env = agent_environment(home=seen_home, base_url=base_url, key=proxy.key, model=model_id,
                                extra=invocation.env)
        socket_path = os.path.join(sockets, "proxy.sock") if sockets is not None else None
        process = await _run(invocation, env, Path(workspace), limits, proxy.key, socket_path, host=host,
                             host_home=str(home))
        if spec.workspace_environment and spec.finish is not None:
            state = await asyncio.to_thread(spec.finish, state, Path(workspace))
    except _NotRun as exc:
        proxy.stop_episode("not_run", str(exc))
    except (OSError, ValueError) as exc:
        proxy.stop_episode("error", f"the agent could not start: {type(exc).__name__}: {exc}")
        process = None
    finally:
        await proxy.stop()
        await asyncio.to_thread(remove_workspace, workspace)
        await asyncio.to_thread(remove_workspace, home)
        if sockets is not None:
            await asyncio.to_thread(_remove_socket_dir, sockets)
    episode = _finish(proxy, agent, process, messages, time.monotonic() - started)
    episode.state = state
    return episode


def _socket_dir() -> str:
    """A fresh folder for the proxy's Unix socket, in the runner's private base (0711: enterable, not listable)."""
    import tempfile

    from pytest_jeval.sandbox.files import private_base_dir

    folder = tempfile.mkdtemp(prefix="proxy-", dir=private_base_dir("/tmp" if os.path.isdir("/tmp") else None))
    os.chmod(folder, 0o711)
    return folder


def _remove_socket_dir(folder: str) -> None:
    from pytest_jeval.sandbox.files import remove_tree

    remove_tree(folder)


@dataclasses.dataclass
class _Process:
    invocation: AgentInvocation
    status: int | None
    stdout: Capture
    stderr: Capture
    timed_out: bool
    seconds: float
    survivors: int
    containment: str
    isolation: list[str]


async def _reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    """An asyncio reader of the read end ``fd`` of a pipe (the transport closes it)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 16)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                os.fdopen(fd, "rb", buffering=0))
    return reader, transport


class _NotRun(Exception):
    """The benchmark's environment said the sample cannot run here (``NotRunnable``)."""


async def _run(invocation: AgentInvocation, env: dict[str, str], workspace: Path, limits: Limits,
               marker: str, socket_path: str | None = None, *, host: AgentHost | None = None,
               host_home: str | None = None) -> _Process:
    """Run the agent to its end or its time limit; kill whatever of it is left.

    With ``socket_path`` (the proxy's Unix socket) the agent runs in its sandbox
    (:func:`pytest_jeval.sandbox.confined.confine`); without it, in a process group only.
    The output pipes are the runner's own (not asyncio's), so waiting for the agent's exit
    never waits for a daemon that holds them open.
    """
    home = env.get("HOME") or str(workspace)
    with contextlib.ExitStack() as stack:
        if host is not None and socket_path is not None and host_home is not None:  # inside a task's environment
            from pytest_jeval.sandbox.confined import readable_paths

            readable = readable_paths(invocation.argv, search_path=env.get("PATH", ""), writable=[host_home],
                                      extra=invocation.readable)
            box = stack.enter_context(host.launch(list(invocation.argv), home=host_home, socket_path=socket_path,
                                                  readable=readable, env=env))
            argv, popen, cgroup, tags = box.argv, box.popen, box.cgroup, box.tags
            env, workspace = box.env or env, Path(box.cwd or workspace)
        elif socket_path is not None:
            from pytest_jeval.sandbox.confined import confine, readable_paths

            readable = readable_paths(invocation.argv, search_path=env.get("PATH", ""),
                                      writable=[str(workspace), home], extra=invocation.readable)
            box = stack.enter_context(confine(list(invocation.argv), workspace=str(workspace), home=home,
                                              socket_path=socket_path, readable=readable))
            argv, popen, cgroup, tags = box.argv, box.popen, box.cgroup, box.tags
        else:
            argv, popen, cgroup, tags = list(invocation.argv), {}, None, ["session", "process-group"]
        return await _supervise(invocation, argv, popen, cgroup, tags, env, workspace, limits, marker)


async def _supervise(invocation: AgentInvocation, argv: list[str], popen: dict[str, Any], cgroup: Any,
                     tags: list[str], env: dict[str, str], workspace: Path, limits: Limits,
                     marker: str) -> _Process:
    out, err = Capture(), Capture()
    started = time.monotonic()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    transports: list[asyncio.BaseTransport] = []
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=str(workspace), env=env, stdin=asyncio.subprocess.DEVNULL, stdout=out_w, stderr=err_w,
                start_new_session=True, **popen)
        finally:
            os.close(out_w)
            os.close(err_w)
            if cgroup is not None:
                cgroup.close()
        out_reader, out_t = await _reader(out_r)
        out_r = -1
        transports.append(out_t)
        err_reader, err_t = await _reader(err_r)
        err_r = -1
        transports.append(err_t)
        drains = asyncio.ensure_future(asyncio.gather(_drain(out_reader, out), _drain(err_reader, err)))
        timed_out = False
        try:
            await asyncio.wait_for(proc.wait(), limits.time_limit)
        except asyncio.TimeoutError:
            timed_out = True
        except BaseException:  # cancelled (the run is closing): nothing of the agent may stay behind
            kill_group(proc.pid)
            if cgroup is not None:
                cgroup.kill_all()
            for pid in processes_with(f"OPENAI_API_KEY={marker}"):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            raise
        finally:
            kill_group(proc.pid)  # the agent's group, and whatever of it is left after a clean exit
        if proc.returncode is None:
            await proc.wait()
        if cgroup is not None:
            await asyncio.to_thread(cgroup.kill_all)
        survivors = await kill_marked(f"OPENAI_API_KEY={marker}")
        try:
            await asyncio.wait_for(asyncio.shield(drains), 5.0)
        except asyncio.TimeoutError:  # something outside our reach still holds the pipes: stop reading
            drains.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await drains
    finally:
        for fd in (out_r, err_r):
            if fd >= 0:
                os.close(fd)
        for transport in transports:
            transport.close()
    return _Process(invocation=invocation, status=proc.returncode, stdout=out, stderr=err, timed_out=timed_out,
                    seconds=time.monotonic() - started, survivors=survivors,
                    containment="bwrap" if popen else "group", isolation=tags)


def _finish(proxy: Any, agent: ExternalAgent, process: _Process | None, messages: Messages,
            seconds: float) -> Episode:
    ep: Episode = proxy.episode
    ep.wall_seconds = seconds
    if not ep.messages:
        ep.messages = [dict(m) for m in messages]
    ep.tool_calls = conversation_tool_calls(ep.messages)
    info: dict[str, Any] = {"backend": agent.name, "requests": proxy.exchanges, "refused_requests": proxy.refused,
                            "proxy_overhead_seconds": round(proxy.overhead_seconds, 6)}
    if process is not None:
        stdout, stderr = process.stdout.text(), process.stderr.text()
        info.update(
            argv=list(process.invocation.argv), exit_status=process.status, timed_out=process.timed_out,
            seconds=round(process.seconds, 6), containment=process.containment, isolation=process.isolation,
            survivors=process.survivors,
            stdout=cut_output(stdout, MAX_KEPT)[0], stderr=cut_output(stderr, MAX_KEPT)[0],
            stdout_bytes=process.stdout.total, stderr_bytes=process.stderr.total,
            stdout_truncated=process.stdout.truncated, stderr_truncated=process.stderr.truncated)
        if process.timed_out:
            proxy.stopped = None  # the time limit is why it stopped, whatever the proxy saw before
            proxy.stop_episode("time_limit", f"the agent ran past {proxy.limits.time_limit:g}s and was killed")
        elif process.status != 0 and proxy.stopped is None:
            tail = stderr.strip()[-STDERR_TAIL:]
            proxy.stop_episode("error", f"the agent exited with status {process.status}"
                                        + (f": {tail}" if tail else ""))
        try:
            answer = process.invocation.answer_from(stdout, stderr, process.status or 0)
        except Exception as exc:  # an adapter that cannot read the output: the episode is an error
            answer = ""
            if proxy.stopped is None:
                proxy.stop_episode("error", f"reading the agent's answer failed: {type(exc).__name__}: {exc}")
        ep.replies.append(_final_reply(answer, proxy.model, ep.replies))
    ep.external = info
    return ep


def _final_reply(answer: str, model: str, replies: list[Reply]) -> Reply:
    """The agent's answer as the episode's last reply: it carries no tokens of its own (the proxied turns do)."""
    cached = bool(replies) and all(r.cached for r in replies)
    last = replies[-1] if replies else None
    return Reply(text=answer, model=model, prompt_tokens=0, completion_tokens=0, cached=cached, attempts=0,
                 finish_reason="stop", sent=last.sent if last is not None else (),
                 message={"role": "assistant", "content": answer})

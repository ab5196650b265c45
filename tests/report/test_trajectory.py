"""Agent trajectories in the report: how they are loaded beside the records, and how they are shown.

Loading is checked on small hand-written files (sidecar and inline trajectories, a sidecar
outside the results directory, malformed lines, unknown record ids); the page on hostile
content; and once end to end: a real agent run against the strict scripted server, its
report opened in headless Chromium (the DevTools client of ``tests/support/browser.py``), a
record's trajectory expanded, its tool call and result read off the page.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.report import _trajectory, build_report, load_result, write_report
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.agent import AgentProject
from tests.support.browser import Browser, Page, type_search

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def agent_record(rid: str, *, correct: bool = False, **extra: Any) -> dict[str, Any]:
    agent = {"stop_reason": "final", "turns": 2, "tool_calls": 1, "tool_errors": 0, "prompt_tokens": 10,
             "completion_tokens": 5, "wall_seconds": 0.25, "tool_seconds": 0.01, "limit": None, "error": None}
    return {"record_id": rid, "benchmark": "agentic", "model": "m", "backend": "agent", "question": f"q {rid}",
            "model_answer": "5", "is_correct": correct, "error": None, "turn_count": 2, "tool_calls": 1,
            "agent": agent, **extra}


def conversation(tag: str, *, result: str = "5", error: str | None = None, truncated: bool = False,
                 name: str = "add", arguments: str = '{"a": 2, "b": 3}') -> dict[str, Any]:
    """A trajectory in the writer's format: one tool call and its result, then the answer."""
    return {
        "messages": [
            {"role": "user", "content": f"question {tag}"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call-{tag}", "type": "function", "function": {"name": name, "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": f"call-{tag}", "content": result},
            {"role": "assistant", "content": f"answer {tag}"},
        ],
        "tool_calls": [{"id": f"call-{tag}", "name": name, "arguments": arguments, "turn": 1, "parsed": None,
                        "result": result, "error": error, "duration": 0.004, "truncated": truncated,
                        "output_chars": len(result) * (10 if truncated else 1)}],
    }


def sidecar_line(rid: str, trajectory: dict[str, Any]) -> str:
    return json.dumps({"record_id": rid, "benchmark": "agentic", "model": "m", **trajectory}) + "\n"


def write_run(directory: Path, records: list[dict[str, Any]], sidecar: str | bytes | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "agentic_m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    if sidecar is not None:
        side = directory / "agentic_m.jsonl.trajectories.jsonl"
        side.write_bytes(sidecar if isinstance(sidecar, bytes) else sidecar.encode())
    return path


# -- loading ------------------------------------------------------------------------------------

def test_sidecar_trajectories_are_read_by_record_id_the_newest_line_winning(tmp_path: Path) -> None:
    direct = {"record_id": "d", "benchmark": "agentic", "model": "m", "is_correct": True, "error": None}
    path = write_run(tmp_path, [agent_record("a"), agent_record("b"), direct],
                     sidecar_line("a", conversation("a")) + sidecar_line("b", conversation("b-old"))
                     + sidecar_line("b", conversation("b")))
    result = load_result(path, root=tmp_path, trajectories=True)
    assert result.problems == []
    assert set(result.trajectories) == {"a", "b"}
    assert result.trajectories["a"] == conversation("a")  # record_id, benchmark, model left out
    assert result.trajectories["b"]["messages"][0]["content"] == "question b"  # a rerun's line replaces the first


def test_inline_trajectories_are_read_and_win_over_the_sidecar(tmp_path: Path) -> None:
    path = write_run(tmp_path, [agent_record("a", trajectory=conversation("inline")), agent_record("b")],
                     sidecar_line("a", conversation("sidecar")) + sidecar_line("b", conversation("b")))
    result = load_result(path, trajectories=True)
    assert result.problems == []
    assert result.trajectories["a"]["messages"][0]["content"] == "question inline"
    assert result.trajectories["b"]["messages"][0]["content"] == "question b"


def test_an_inline_trajectory_of_the_wrong_shape_is_left_out_and_named(tmp_path: Path) -> None:
    path = write_run(tmp_path, [agent_record("a", trajectory={"messages": "no"}),
                                agent_record("b", trajectory={"messages": [{"content": "no role"}]}),
                                agent_record("c", trajectory=conversation("c"))])
    result = load_result(path, trajectories=True)
    assert set(result.trajectories) == {"c"} and len(result.records) == 3  # the records themselves stay
    assert result.problems == [f'{path}: record "a": its trajectory is left out (messages is missing or not a list)',
                               f'{path}: record "b": its trajectory is left out '
                               "(messages[0] is not a message object with a text role)"]


def test_a_sidecar_outside_the_results_directory_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "results"
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(sidecar_line("a", conversation("SECRET-OUTSIDE")))
    path = write_run(root, [agent_record("a")])
    (root / "agentic_m.jsonl.trajectories.jsonl").symlink_to(outside)
    result = load_result(path, root=root, trajectories=True)
    assert result.trajectories == {}
    assert result.problems == [f"{root / 'agentic_m.jsonl.trajectories.jsonl'}: outside the results directory "
                               f"{root}; ignored"]
    html = write_report([root], tmp_path / "r.html").read_text()  # a directory: nothing outside it is read
    assert "SECRET-OUTSIDE" not in html and "No trajectory was stored" in html
    assert load_result(path, trajectories=True).trajectories["a"] == conversation("SECRET-OUTSIDE")  # a file named directly: read


def test_a_sidecar_link_that_stays_inside_is_followed(tmp_path: Path) -> None:
    path = write_run(tmp_path, [agent_record("a")])
    (tmp_path / "kept.jsonl.txt").write_text(sidecar_line("a", conversation("a")))
    (tmp_path / "agentic_m.jsonl.trajectories.jsonl").symlink_to(tmp_path / "kept.jsonl.txt")
    result = load_result(path, root=tmp_path, trajectories=True)
    assert result.problems == [] and set(result.trajectories) == {"a"}


def test_malformed_sidecar_lines_are_skipped_and_listed(tmp_path: Path) -> None:
    good = sidecar_line("a", conversation("a")).encode()
    lines = [
        b"{not json\n",                                                   # 1
        b'{"record_id": "b", "messages": [\xff]}\n',                      # 2
        b"[1, 2]\n",                                                      # 3
        b'{"messages": []}\n',                                            # 4
        b'{"record_id": "b", "messages": {"role": "user"}}\n',            # 5
        b'{"record_id": "b", "messages": [], "tool_calls": [1]}\n',       # 6
        b"\n",                                                            # 7 (blank: ignored)
        good,                                                             # 8
        b'{"record_id": "b", "messages": [',                              # 9, torn (a killed run)
    ]
    path = write_run(tmp_path, [agent_record("a"), agent_record("b")], b"".join(lines))
    result = load_result(path, root=tmp_path, trajectories=True)
    assert set(result.trajectories) == {"a"}
    side = f"{path}.trajectories.jsonl"
    reasons = [p.removeprefix(side + ":") for p in result.problems]
    assert [r.split(":")[0] for r in reasons] == ["1", "2", "3", "4", "5", "6", "9"]
    assert "not valid JSON" in reasons[0] and "not valid UTF-8 (byte 33)" in reasons[1]
    assert "not a trajectory object (a JSON list)" in reasons[2]
    assert "record_id is missing or not text" in reasons[3]
    assert "messages is missing or not a list" in reasons[4]
    assert "tool_calls is not a list of objects" in reasons[5]
    assert "an incomplete last line (a killed run?)" in reasons[6]
    assert all(r.endswith("; line skipped") for r in reasons)
    assert result.bad_lines == 0 and len(result.records) == 2  # the results file itself is whole


def test_sidecar_lines_of_unknown_record_ids_are_ignored_and_counted(tmp_path: Path) -> None:
    path = write_run(tmp_path, [agent_record("a")],
                     sidecar_line("a", conversation("a")) + sidecar_line("ghost", conversation("ghost"))
                     + sidecar_line("ghost2", conversation("ghost")))
    result = load_result(path, trajectories=True)
    assert set(result.trajectories) == {"a"}
    assert result.problems == [f"{path}.trajectories.jsonl: 2 line(s) for record ids the results file does not "
                               "have; ignored"]
    assert "question ghost" not in build_report([result])


# -- the page -----------------------------------------------------------------------------------

class Tags(HTMLParser):
    """The start tags, attributes and text of a page, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


def hostile_run(tmp_path: Path) -> Path:
    trajectory = conversation(HOSTILE, result=HOSTILE, error=HOSTILE, name=HOSTILE,
                              arguments=json.dumps({"x": HOSTILE}))
    trajectory["messages"].insert(0, {"role": HOSTILE, "content": [{"type": "text", "text": HOSTILE}]})
    record = agent_record("evil", question=HOSTILE)
    record["agent"].update(stop_reason=HOSTILE, error=HOSTILE, limit=HOSTILE)
    return write_run(tmp_path, [record], sidecar_line("evil", trajectory))


def test_hostile_trajectory_content_is_escaped(tmp_path: Path) -> None:
    html = build_report([load_result(hostile_run(tmp_path), trajectories=True)])
    page = parse(html)
    names = [t for t, _ in page.tags]
    assert names.count("script") == 1 and "img" not in names  # only the page's own search script
    assert not [a for _, attrs in page.tags for a, _ in attrs if a.startswith("on")]
    text = "".join(page.text)
    # every place the content goes: the role, the message parts, the call's name and arguments,
    # the result, the error and the record's stop reason, limit and error
    assert text.count(HOSTILE) >= 7
    assert json.dumps(HOSTILE)[1:-1] in text  # inside the pretty-printed arguments


def test_the_trajectory_shows_calls_results_errors_and_truncation(tmp_path: Path) -> None:
    records = [agent_record("ok", correct=True), agent_record("bad"), agent_record("cut")]
    records[1]["agent"].update(tool_errors=1, stop_reason="max_turns", limit="max_turns = 2")
    sidecar = (sidecar_line("ok", conversation("ok"))
               + sidecar_line("bad", conversation("bad", result="Error: unknown tool", error="unknown tool 'nope'",
                                                  name="nope", arguments="{broken"))
               + sidecar_line("cut", conversation("cut", result="x" * 30, truncated=True)))
    html = build_report([load_result(write_run(tmp_path, records, sidecar), trajectories=True)])
    assert html.count('<tr class="trajectory-row">') == 3
    assert "trajectory: stop final · 2 turns · 1 tool calls (add) · 0 tool errors · 0.250 s" in html
    assert "trajectory: stop max_turns · 2 turns · 1 tool calls (nope) · 1 tool errors · 0.250 s" in html
    assert "limit: max_turns = 2" in html
    assert '<span class="name">→ add</span>' in html
    assert '<pre class="args">{\n  &quot;a&quot;: 2,\n  &quot;b&quot;: 3\n}</pre>' in html  # pretty JSON
    assert '<pre class="args">{broken</pre>' in html  # not JSON: as the model sent it
    assert '<div class="msg role-tool tool-error">' in html and "error: unknown tool &#x27;nope&#x27;" in html
    assert html.count("role-tool tool-error") == 1
    assert "tool output truncated: 300 characters cut to its head and tail" in html
    assert '<div class="body">answer ok</div>' in html and '<div class="body">question cut</div>' in html


def test_an_external_agent_s_process_is_shown_escaped(tmp_path: Path) -> None:
    trajectory = {**conversation("ext"), "external": {
        "argv": ["my-agent", "--prompt-file", "/home/prompt.md"], "exit_status": 3, "containment": "pidns",
        "survivors": 1, "stdout": f"final {HOSTILE}", "stdout_truncated": True, "stderr": "warning: slow"}}
    html = build_report([load_result(write_run(tmp_path, [agent_record("ext")], sidecar_line("ext", trajectory)),
                                     trajectories=True)])
    assert "agent process: exit status 3; containment pidns; 1 process(es) killed after it" in html
    assert '<pre class="args">my-agent --prompt-file /home/prompt.md</pre>' in html
    assert "stdout (cut: head and tail kept)" in html and "warning: slow" in html
    assert HOSTILE not in html  # escaped like every other part
    names = [t for t, _ in parse(html).tags]
    assert names.count("script") == 1 and "img" not in names


def test_reasoning_and_calls_without_a_tool_message_are_shown(tmp_path: Path) -> None:
    trajectory = conversation("r")
    trajectory["messages"][1]["reasoning_content"] = "let me add"
    trajectory["messages"] = trajectory["messages"][:2]  # stopped before the tool replied
    trajectory["tool_calls"][0].update(result="", error="max_tool_calls = 0")
    html = build_report([load_result(write_run(tmp_path, [agent_record("r")], sidecar_line("r", trajectory)), trajectories=True)])
    assert '<div class="body muted">let me add</div>' in html
    assert "1 tool call(s) with no tool message in the conversation:" in html
    unanswered = html.split("no tool message in the conversation:")[1]
    assert '<div class="msg role-tool tool-error"><div class="role">tool call call-r · add' in unanswered
    assert "error: max_tool_calls = 0" in unanswered


def test_long_texts_and_long_trajectories_are_capped_with_a_note(tmp_path: Path) -> None:
    long = conversation("long", result="y" * (_trajectory.MAX_TEXT + 1234))
    many = {"messages": [{"role": "user", "content": "z" * 1000} for _ in range(_trajectory.MAX_MESSAGES + 50)],
            "tool_calls": []}
    path = write_run(tmp_path, [agent_record("long"), agent_record("many")],
                     sidecar_line("long", long) + sidecar_line("many", many))
    html = build_report([load_result(path, trajectories=True)])
    assert "y" * _trajectory.MAX_TEXT in html and "y" * (_trajectory.MAX_TEXT + 1) not in html
    assert "… 1,234 more characters not shown" in html
    shown = _trajectory.MAX_CHARS // 1000
    assert f"… {_trajectory.MAX_MESSAGES + 50 - shown:,} more messages not shown" in html
    assert len(html) < 2 * _trajectory.MAX_CHARS + 100_000


def test_records_without_trajectories_render_as_before(tmp_path: Path) -> None:
    direct = {"record_id": "d", "benchmark": "agentic", "model": "m", "is_correct": True, "error": None}
    html = build_report([load_result(write_run(tmp_path, [direct]), trajectories=True)])
    assert '<tr class="trajectory-row">' not in html and "<details" not in html
    assert [t for t, _ in parse(html.split('<table id="samples">')[1]).tags].count("tr") == 2  # head + the record
    off = build_report([load_result(write_run(tmp_path / "off", [agent_record("a")]), trajectories=True)])  # trajectories = "off"
    assert off.count('<tr class="trajectory-row">') == 1 and "No trajectory was stored for this record" in off


# -- end to end, in Chromium --------------------------------------------------------------------

SCRIPTS: dict[str, list[Any]] = {"[one]": [tool_answer(ToolCallSpec("add", {"a": 2, "b": 3}, id="c-one")), "5"],
           "[raises]": [tool_answer(ToolCallSpec("boom", id="c-boom")), "recovered"]}


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("Debian's chromium is not installed here (`make test` installs it: apt-get install chromium)")
    b = Browser(executable, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


OPEN_AND_READ = """(async () => {
  const row = Array.from(document.querySelectorAll('#samples tbody tr[data-status]'))
    .find(tr => tr.children[2].textContent === RID);
  const details = row.nextElementSibling.querySelector('details.trajectory');
  const before = details.querySelector('.conversation').checkVisibility();
  details.querySelector('summary').click();
  await new Promise(r => requestAnimationFrame(r));
  const visible = (sel) => Array.from(details.querySelectorAll(sel)).filter(e => e.checkVisibility())
    .map(e => e.innerText);
  return {before, open: details.open, summary: details.querySelector('summary').innerText,
          calls: visible('.tool-call'), tools: visible('.msg.role-tool'),
          errors: visible('.msg.tool-error'), pwned: window.__pwned === undefined ? null : window.__pwned};
})()"""


@pytest.mark.slow
def test_a_real_run_s_trajectory_opens_in_chromium(pytester: pytest.Pytester, chromium: Browser,
                                                   tmp_path: Path) -> None:
    with FakeOpenAIServer(script_responder(SCRIPTS, default="no script")) as server:
        project = AgentProject(pytester, server)
        project.write([{"id": "one", "q": "[one] please", "a": "5"}, {"id": "raises", "q": "[raises] now", "a": "x"}])
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == 1, result.stdout.str()[-3000:]  # "raises" answers "recovered", not "x"
    out = pytester.path / "out"
    assert (out / "agentic_agent-model.jsonl.trajectories.jsonl").is_file()
    evil = hostile_run(tmp_path / "evil")
    report = write_report([out, evil], tmp_path / "report.html")

    async def scenario(page: Page) -> dict[str, Any]:
        found = {rid: await page.js(OPEN_AND_READ.replace("RID", json.dumps(rid))) for rid in ("one", "raises", "evil")}
        found["search"] = await type_search(page, "boom")  # the summary line names the tools
        found["visible"] = await page.js("Array.from(document.querySelectorAll('#samples tbody tr:not([hidden])'))"
                                         ".map(tr => tr.getAttribute('data-status') ? tr.children[2].textContent"
                                         " : tr.className)")
        found["problems"] = page.problems()
        return found

    found = chromium.inspect(report.as_uri(), scenario)
    assert found["problems"] == []  # no script ran, no image was requested
    one, raises, evil_row = found["one"], found["raises"], found["evil"]
    assert one["before"] is False and one["open"] is True  # closed until clicked
    assert "stop final · 2 turns · 1 tool calls (add) · 0 tool errors" in one["summary"]
    assert one["calls"] == ['→ add id c-one\n{\n  "a": 2,\n  "b": 3\n}']
    assert len(one["tools"]) == 1 and one["tools"][0].startswith("tool · c-one · add · ")
    assert one["tools"][0].endswith("\n5") and one["errors"] == []
    assert raises["calls"][0].startswith("→ boom id c-boom")
    assert len(raises["errors"]) == 1 and "Error: RuntimeError: kaput" in raises["errors"][0]
    assert "error: RuntimeError: kaput" in raises["errors"][0]
    assert evil_row["pwned"] is None and HOSTILE in evil_row["summary"]
    assert found["search"] == (2, 1)  # two rows of the table shown, one sample: a row hides its trajectory too
    assert found["visible"] == ["raises", "trajectory-row"]

"""pinchbench: PinchBench-format tasks through the plugin; graders in the sandbox, hybrid weighting, sessions.

Data: tests/data/pinchbench/clone (four tasks written for these tests in upstream's task format, see its README);
the adversarial graders below are written into a temporary clone by the tests themselves.
"""

from __future__ import annotations

import json
import shutil
import socket
import textwrap
import threading
from pathlib import Path

import pytest

from pytest_jeval.benchmarks.pinchbench.grading import combine, normalize_judgement, parse_judge_text
from pytest_jeval.cli import main as jeval
from pytest_jeval.testing.openai_server import ToolCallSpec, tool_answer
from tests.support.research import DATA, Responder, resume_keeps_every_record_once, serve

CLONE = DATA / "pinchbench" / "clone"


def entry(clone: Path = CLONE, options: str = "", keys: str = "") -> str:
    return f'[[benchmarks]]\nname = "pinchbench"\ndata_dir = "{clone}"\n{keys}[benchmarks.options]\n{options}'


def judge(prompt: str) -> str:
    """Full marks when the report the judged task asks for is among the workspace files, else none."""
    total = 1.0 if "### File: report.md" in prompt and "South" in prompt else 0.0
    return "```json\n" + json.dumps({"scores": {"correctness": total, "clarity": total}, "total": total,
                                     "notes": "checked"}) + "\n```"


# --------------------------------------------------------------------------- the rules


def test_hybrid_weighting_equals_a_hand_computation() -> None:
    auto, llm = {"score": 0.75}, {"score": 0.5}
    assert combine("hybrid", {"automated": 0.6, "llm_judge": 0.4}, auto, llm) == pytest.approx(0.75 * 0.6 + 0.5 * 0.4)
    assert combine("hybrid", None, auto, llm) == pytest.approx((0.75 + 0.5) / 2)            # 0.5 each by default
    assert combine("hybrid", {"automated": 3, "llm_judge": 1}, auto, llm) == pytest.approx((0.75 * 3 + 0.5) / 4)
    assert combine("hybrid", {"automated": 0, "llm_judge": 0}, auto, llm) == pytest.approx(0.625)
    assert combine("hybrid", None, auto, {"score": None}) is None                             # a part unscored
    assert combine("automated", None, auto, None) == 0.75 and combine("llm_judge", None, None, llm) == 0.5


@pytest.mark.parametrize(("reply", "total"), [
    ('{"scores": {"a": 1.0, "b": 0.5}, "total": 0.75, "notes": "x"}', 0.75),
    ('Here:\n```json\n{"criteria_scores": {"a": {"score": 0.4}}, "notes": "x"}\n```', 0.4),   # mean of criteria
    ('{"scores": {"a": 1.0, "b": 0.5}, "total": 1.5}', 0.75),                                  # a summed total
    ('prose {"x": 1} then {"scores": {"a": 0.2}, "total": 0.2} and {"y": 2}', 0.2),           # prefers "scores"
    ("Overall score: 0.65 after weighing everything", 0.65),                                  # prose fallback
    ("I cannot grade this.", None),
])
def test_judge_replies_are_read_as_upstream_reads_them(reply: str, total: float | None) -> None:
    assert normalize_judgement(parse_judge_text(reply))["total"] == (pytest.approx(total) if total is not None else None)


# --------------------------------------------------------------------------- through the plugin


def test_the_oracle_scores_one_nop_scores_zero_and_web_tasks_are_not_run(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder(judge=judge)) as p:
        result = p.run(entry(keys='agent = "oracle"\n'))
        result.assert_outcomes(passed=3, failed=1)
        records = p.records("pinchbench")
        for task in ("task_01_beta_date", "task_02_sales_report", "task_03_project_memory"):
            assert records[task]["task_score"] == 1.0 and records[task]["is_correct"] is True, records[task]
        assert records["task_02_sales_report"]["breakdown"]["automated.north"] == 1.0
        assert records["task_02_sales_report"]["breakdown"]["llm_judge.correctness"] == 1.0
        web = records["task_04_stock_lookup"]
        assert web["is_correct"] is None and web["offline_reason"] == "needs the live web (a research task); not run offline"
        assert web["scoring_metadata"]["unscored_reason"] == web["offline_reason"] and web["turn_count"] in (0, None)
        assert not [b for b in p.chat_bodies() if b["model"] == "test-model"]
        result = p.run(entry(keys='agent = "nop"\n'))
        result.assert_outcomes(failed=4)
        nop = p.records("pinchbench")
        assert [nop[t]["task_score"] for t in ("task_01_beta_date", "task_02_sales_report",
                                               "task_03_project_memory")] == [0.0, 0.0, 0.0]
        assert p.summary("pinchbench")["not_run_offline"] == ["task_04_stock_lookup"]


def call(name: str, **arguments: object) -> object:
    return tool_answer(ToolCallSpec(name, arguments))


def test_a_model_works_the_tasks_with_the_tools_and_sessions(pytester: pytest.Pytester) -> None:
    scripts = {
        "Read notes.md and tell me when the beta ships": [
            call("read", path="notes.md"), call("write", path="answer.txt", content="19 May 2025"), "19 May 2025."],
        "Please remember this for later": [
            call("write", path="memory/MEMORY.md", content="Kestrel (Go log shipper); passphrase: amber falcon dawn"),
            "Saved to memory/MEMORY.md.", "Your project is Kestrel."],
        # the third session is a new conversation: its first user message is the session's prompt
        "I saved some notes in memory/MEMORY.md": [call("exec", command="cat memory/MEMORY.md"),
                                                   "Your passphrase is amber falcon dawn."],
    }
    with serve(pytester, Responder(scripts=scripts, judge=judge)) as p:
        result = p.run(entry(options='tasks = ["task_01_beta_date", "task_03_project_memory"]\n'))
        result.assert_outcomes(passed=2)
        records = p.records("pinchbench")
        assert records["task_01_beta_date"]["breakdown"] == {"automated.file_created": 1.0,
                                                              "automated.correct_date": 1.0,
                                                              "automated.read_notes": 1.0}
        memory = records["task_03_project_memory"]
        assert memory["breakdown"] == {"automated.memory_saved": 1.0, "automated.passphrase_recalled": 1.0}
        assert memory["turn_count"] == 5
        assert memory["scoring_metadata"]["deviations"][-1].startswith("a new_session session starts a fresh")
        assert not any("new_session" in d for d in records["task_01_beta_date"]["scoring_metadata"]["deviations"])
        bodies = [b for b in p.chat_bodies() if "Please remember" in json.dumps(b) or "I saved some notes" in
                  json.dumps(b)]
        last = bodies[-1]["messages"]
        # the third session is a new one: the system prompt, then only that session's messages
        assert last[0]["role"] == "system" and "I saved some notes" in last[1]["content"]
        assert not any("Please remember" in str(m.get("content")) for m in last)
        second = json.dumps(bodies[-3]["messages"])  # the second session continues the first one's conversation
        assert "Please remember" in second and "What is my project called" in second


def test_judge_failures_and_raising_graders_leave_the_task_unscored(pytester: pytest.Pytester,
                                                                     tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    shutil.copytree(CLONE, clone)
    path = clone / "tasks" / "task_01_beta_date.md"
    path.write_text(path.read_text().replace('    scores = {"file_created"', "    1 / 0\n    scores = {\"file_created\""))
    with serve(pytester, Responder(judge=lambda prompt: "Looks fine to me.")) as p:
        result = p.run(entry(clone, options='tasks = ["task_01_beta_date", "task_02_sales_report"]\n',
                             keys='agent = "oracle"\n'))
        result.assert_outcomes(failed=2)
        records = p.records("pinchbench")
        raised = records["task_01_beta_date"]
        assert raised["is_correct"] is None and raised["unscored"] is True
        assert raised["scoring_metadata"]["unscored_reason"] == (
            "automated: the grader failed: ZeroDivisionError: division by zero")
        hybrid = records["task_02_sales_report"]
        assert hybrid["automated_score"] == 1.0 and hybrid["judge_score"] is None and hybrid["task_score"] is None
        assert hybrid["scoring_metadata"]["unscored_reason"] == "llm_judge: the judge's reply holds no total score"


ADVERSARY = '''\
---
id: task_99_adversary
name: Adversarial grader
category: security
grading_type: hybrid
timeout_seconds: 60
workspace_files:
  - path: "answer.txt"
    content: "the agent's answer"
---

## Prompt

Say hello.

## Expected Behavior

Anything.

## Automated Checks

```python
def grade(transcript: list, workspace_path: str) -> dict:
    import os, socket
    from pathlib import Path

    def able(action):
        try:
            return 1.0 if action() else 0.0
        except Exception:
            return 0.0

    scores = {
        "read_secret": able(lambda: "s3cret" in Path(SECRET).read_text()),
        "list_secret_dir": able(lambda: os.listdir(os.path.dirname(SECRET))),
        "read_etc_passwd": able(lambda: Path("/etc/passwd").read_text()),
        "write_secret_dir": able(lambda: Path(os.path.dirname(SECRET), "planted.txt").write_text("x")),
        "network": able(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=3)),
    }
    transcript.append({"type": "message", "message": {"role": "user", "content": ["forged"]}})
    Path(workspace_path, "answer.txt").write_text("overwritten by the grader")
    Path(workspace_path, "transcript.jsonl").write_text("forged")
    scores["in_workspace"] = 1.0 if Path(workspace_path, "answer.txt").exists() else 0.0
    return scores
```

## LLM Judge Rubric

Anything.
'''


def test_a_grader_cannot_read_outside_its_workspace_write_the_transcript_or_reach_the_network(
        pytester: pytest.Pytester, tmp_path: Path) -> None:
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    secret = secret_dir / "key.txt"
    secret.write_text("s3cret")
    secret.chmod(0o644)
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    clone = tmp_path / "clone"
    (clone / "tasks").mkdir(parents=True)
    grader = ADVERSARY.replace("SECRET", repr(str(secret))).replace("PORT", str(listener.getsockname()[1]))
    (clone / "tasks" / "task_99_adversary.md").write_text(grader)
    seen: list[str] = []

    def watching_judge(prompt: str) -> str:
        seen.append(prompt)
        return '{"scores": {"x": 1.0}, "total": 1.0}'

    try:
        with serve(pytester, Responder(scripts={"Say hello": ["Hello!"]}, judge=watching_judge)) as p:
            result = p.run(entry(clone))
            result.assert_outcomes(failed=1)
            record = p.records("pinchbench")["task_99_adversary"]
    finally:
        listener.close()
    assert record["breakdown"] == {"automated.read_secret": 0.0, "automated.list_secret_dir": 0.0,
                                   "automated.read_etc_passwd": 0.0, "automated.write_secret_dir": 0.0,
                                   "automated.network": 0.0, "automated.in_workspace": 1.0,
                                   "llm_judge.x": 1.0}
    assert not accepted and sorted(p.name for p in secret_dir.iterdir()) == ["key.txt"]
    # the judge saw the agent's workspace and transcript, not what the grader wrote into its copy
    (prompt,) = seen
    assert "the agent's answer" in prompt and "overwritten by the grader" not in prompt
    assert "transcript.jsonl" not in prompt and "forged" not in prompt


@pytest.mark.slow
def test_two_workers_a_resume_and_a_rescore(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder(judge=judge)) as p:
        p.suite(entry(keys='agent = "oracle"\n'))
        assert p.run_subprocess("-n", "2").ret == 1
        first = p.records("pinchbench")
        records, sent, cut = resume_keeps_every_record_once(p, "pinchbench", keep=2)
        assert sent == cut.count("task_02_sales_report")  # the oracle calls no model; task_02's judge is asked
        assert {k: r["task_score"] for k, r in records.items()} == {k: r["task_score"] for k, r in first.items()}
    out = pytester.path / "rescored.jsonl"
    assert jeval(["rescore", str(p.path("pinchbench")), "--reparse-judge", "-o", str(out)]) == 0
    again = {r["record_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {k: r["task_score"] for k, r in again.items()} == {k: r["task_score"] for k, r in records.items()}


def test_a_task_file_that_breaks_the_format_is_a_clear_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "tasks").mkdir(parents=True)
    (clone / "tasks" / "task_01_x.md").write_text(textwrap.dedent("""\
        ---
        id: task_01_x
        grading_type: graded_by_vibes
        ---
        ## Prompt
        Hi.
    """))
    with serve(pytester, Responder()) as p:
        result = p.run(entry(clone))
        assert result.ret != 0 and p.chat_bodies() == []
        assert "grading_type 'graded_by_vibes' is not one of automated, llm_judge, hybrid" in (
            result.stdout.str() + result.stderr.str())




def test_the_judge_gets_the_clones_prompt_and_own_wording_without_it(pytester: pytest.Pytester,
                                                                     tmp_path: Path) -> None:
    only = entry(options='tasks = ["task_02_sales_report"]\n', keys='agent = "oracle"\n')
    with serve(pytester, Responder(judge=judge)) as p:
        p.run(only)
        (prompt,) = p.responder.judge_prompts
        assert prompt.startswith("TEST-CLONE-JUDGE-PROMPT: grade the agent")
        assert "## Task\ndata/sales.csv lists sales" in prompt and "## Grading Rubric\n" in prompt
        assert "## Workspace Files Created by Agent\n### File: data/sales.csv\n" in prompt  # upstream's section
        record = p.records("pinchbench")["task_02_sales_report"]
        assert record["scoring_metadata"]["context"]["judge_prompt_source"] == (
            "upstream scripts/lib_grading.py:_build_judge_prompt()")
        assert not any("judge prompt is" in d for d in record["scoring_metadata"]["deviations"])
    clone = tmp_path / "clone"
    shutil.copytree(CLONE, clone)
    (clone / "scripts" / "lib_grading.py").unlink()
    with serve(pytester, Responder(judge=judge)) as p:
        p.run(only.replace(str(CLONE), str(clone)))
        (prompt,) = p.responder.judge_prompts
        assert prompt.startswith("You are a grading function") and "TEST-CLONE" not in prompt
        again = p.records("pinchbench")["task_02_sales_report"]
        assert again["task_score"] == record["task_score"] == 1.0
        assert again["scoring_metadata"]["deviations"][2].startswith(
            "the judge prompt is pytest-jeval's wording of upstream's judge prompt (cannot read ")

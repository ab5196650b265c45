"""Test copy of the place upstream builds its judge prompt; the wording is written for pytest-jeval's tests.

Only the function's name, signature and prompt variables follow upstream's scripts/lib_grading.py; pytest-jeval
reads the returned f-string as a template and never runs this file.
"""

from typing import Any


def _build_judge_prompt(task: Any, transcript_summary: str, rubric: str, workspace_content: str = "") -> str:
    workspace_section = ""
    if workspace_content.strip():
        workspace_section = f"## Workspace Files Created by Agent\n{workspace_content}\n\n"
    return (
        "TEST-CLONE-JUDGE-PROMPT: grade the agent; reply with JSON only.\n\n"
        f"## Task\n{task.prompt}\n\n"
        f"## Expected Behavior\n{task.expected_behavior}\n\n"
        f"## Agent Transcript (summarized)\n{transcript_summary}\n\n"
        f"{workspace_section}"
        f"## Grading Rubric\n{rubric}\n\n"
        '{"scores": {"criterion_name": 0.0}, "total": 0.0, "notes": "brief justification"}'
    )

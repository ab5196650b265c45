"""Test copy of the place upstream keeps its coverage prompt; the wording is written for pytest-jeval's tests."""


def create_coverage_prompt(query: str, report_content: str, checklists: list, current_date: str | None = None) -> tuple:
    system_prompt = f"""TEST-CLONE-PROMPT coverage. Today is {current_date}. Score each CHECKLIST item 1 when the
report delivers it, else 0."""
    checklist_section = "built by code upstream; pytest-jeval fills it in"
    user_prompt = f"""QUERY:
{query}

REPORT:
{report_content}

CHECKLIST:
{checklist_section}"""
    return system_prompt, user_prompt

"""Test copy of the place upstream keeps its consistency rubric; the table is written for pytest-jeval's tests."""

CONSISTENCY_RUBRIC = """
| Score | Issue Count | Description |
|-------|-------------|-------------|
| 100 | 0 | No contradiction |
| 80 | 1-3 | A few contradictions |
| 50 | 4-9 | Several contradictions |
| 10 | 10+ | Contradictions throughout |
"""


def create_consistency_prompt(query: str, report_content: str, current_date: str | None = None) -> tuple:
    system_prompt = f"""TEST-CLONE-PROMPT consistency. Count the Factual & Logical contradictions. Today is \
{current_date}.

{CONSISTENCY_RUBRIC}"""
    user_prompt = f"""TASK: {query}

REPORT:
{report_content}"""
    return system_prompt, user_prompt

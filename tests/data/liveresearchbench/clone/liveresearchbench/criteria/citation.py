"""Test copy of the place upstream keeps its citation rubric; the table is written for pytest-jeval's tests."""

CITATION_RUBRIC = """
| Score | Issue Count | Description |
|-------|-------------|-------------|
| 100 | 0 | Every major claim is cited |
| 70 | 1-4 | Some claims lack citations |
| 10 | 5+ | Most claims lack citations |
"""


def create_citation_prompt(query: str, report_content: str, current_date: str | None = None) -> tuple:
    system_prompt = f"""TEST-CLONE-PROMPT citation. Count the claims without a citation (Citation Association). \
Today is {current_date}.

{CITATION_RUBRIC}"""
    user_prompt = f"""TASK: {query}

REPORT:
{report_content}"""
    return system_prompt, user_prompt

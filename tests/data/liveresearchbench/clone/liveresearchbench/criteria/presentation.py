"""Test copy of the place upstream keeps its fixed presentation checklist; the questions are written for
pytest-jeval's tests, not upstream's."""

PRESENTATION_QUESTIONS = {
    "p1": "Is the report organised in sections that follow from the research question?",
    "p2": "Does every in-text citation have an entry in the reference list?",
    "p3": "Are Markdown headings used for the section titles?",
}


def create_presentation_prompt(query: str, report_content: str, current_date: str | None = None) -> tuple:
    system_prompt = """TEST-CLONE-PROMPT presentation: check the presentation and formatting, item by item."""
    checklist_section = "built by code upstream; pytest-jeval fills it in"
    user_prompt = f"""QUERY:
{query}

REPORT:
{report_content}

ITEMS:
{checklist_section}"""
    return system_prompt, user_prompt

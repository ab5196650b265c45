"""Test copy of the place upstream keeps its fixed presentation checklist; the questions are written for
pytest-jeval's tests, not upstream's."""

PRESENTATION_QUESTIONS = {
    "p1": "Is the report organised in sections that follow from the research question?",
    "p2": "Does every in-text citation have an entry in the reference list?",
    "p3": "Are Markdown headings used for the section titles?",
}

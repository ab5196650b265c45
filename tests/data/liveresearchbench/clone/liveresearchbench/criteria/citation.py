"""Test copy of the place upstream keeps its citation rubric; the table is written for pytest-jeval's tests."""

CITATION_RUBRIC = """
| Score | Issue Count | Description |
|-------|-------------|-------------|
| 100 | 0 | Every major claim is cited |
| 70 | 1-4 | Some claims lack citations |
| 10 | 5+ | Most claims lack citations |
"""

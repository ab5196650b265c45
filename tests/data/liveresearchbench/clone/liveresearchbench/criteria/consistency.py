"""Test copy of the place upstream keeps its consistency rubric; the table is written for pytest-jeval's tests."""

CONSISTENCY_RUBRIC = """
| Score | Issue Count | Description |
|-------|-------------|-------------|
| 100 | 0 | No contradiction |
| 80 | 1-3 | A few contradictions |
| 50 | 4-9 | Several contradictions |
| 10 | 10+ | Contradictions throughout |
"""

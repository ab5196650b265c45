"""Test copy of the place upstream keeps its depth dimensions; written for pytest-jeval's tests."""

DEPTH_DIMENSIONS = {
    "granularity": "Granularity of Reasoning (0-5): how far ideas are broken into causes and mechanisms",
    "insight": "Multi-Layered Insight (0-5): implications and trade-offs explored",
}


def create_depth_comparison_prompt() -> str:
    return """TEST-CLONE-PROMPT depth. Say which report, A or B, analyses in more depth, or tie."""


def create_depth_user_prompt(query: str, report_a: str, report_b: str) -> str:
    return f"""QUERY:
{query}

REPORT A:
{report_a}

REPORT B:
{report_b}"""

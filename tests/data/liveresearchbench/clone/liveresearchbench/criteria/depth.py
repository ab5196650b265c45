"""Test copy of the place upstream keeps its depth dimensions; written for pytest-jeval's tests."""

DEPTH_DIMENSIONS = {
    "granularity": "Granularity of Reasoning (0-5): how far ideas are broken into causes and mechanisms",
    "insight": "Multi-Layered Insight (0-5): implications and trade-offs explored",
}

"""Small statistics helpers."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list."""
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    """The middle value (the mean of the two middle values for an even count)."""
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return ordered[mid]

#!/bin/bash
set -euo pipefail
cat > /app/stats/core.py <<'PY'
"""Mean and median."""


def mean(values):
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
PY
cd /app && python -m stats

"""stats.core.median for odd and even lengths; mean unchanged; the table still prints."""

import subprocess
import sys

sys.path.insert(0, "/app")

from stats.core import mean, median


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5
    assert median([10, 20]) == 15


def test_mean_unchanged():
    assert mean([1, 2, 3, 6]) == 3


def test_table_prints():
    done = subprocess.run([sys.executable, "-m", "stats"], cwd="/app", capture_output=True, text=True, check=True)
    assert "2.5" in done.stdout

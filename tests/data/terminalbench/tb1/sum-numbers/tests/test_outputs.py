"""Sum and maximum of /app/numbers.csv."""

from pathlib import Path


def test_sum():
    assert Path("/app/sum.txt").read_text().strip() == "31"


def test_max():
    assert Path("/app/max.txt").read_text().strip() == "19"

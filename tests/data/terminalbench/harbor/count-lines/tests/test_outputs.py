"""/app/count.txt holds the line count of /app/data.txt (the expected value ships with the tests)."""

from pathlib import Path

EXPECTED = (Path(__file__).parent / "expected.txt").read_text().strip()


def test_count():
    assert Path("/app/count.txt").read_text().strip() == EXPECTED

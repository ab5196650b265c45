"""The report of /app/orders.json: one line per customer, sorted, with the sum of the amounts."""

from pathlib import Path

EXPECTED = ["ada 33", "lin 7", "mira 17"]


def test_report_exists():
    assert Path("/app/report.txt").is_file()


def test_report_lines():
    lines = Path("/app/report.txt").read_text().strip().splitlines()
    assert [line.strip() for line in lines] == EXPECTED

"""/app/greeting.txt greets the name in /app/name.txt."""

from pathlib import Path


def test_greeting_file_exists():
    assert Path("/app/greeting.txt").exists()


def test_greeting_text():
    assert Path("/app/greeting.txt").read_text() == "Hello, Ada!\n"

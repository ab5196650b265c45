from pathlib import Path


def test_gpu():
    assert Path("/app/gpu.txt").read_text().strip()

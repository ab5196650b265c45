"""Keys on the command line and in URLs are refused with a clear message, and no refused value is printed.

Before: ``jeval run --base-url http://user:SECRET@host/v1`` wrote the password into the generated
``suite.toml`` and ended in INTERNALERROR (as did ``--jeval-set models.0.base_url=...``);
``jeval run ... -- --jeval-set models.0.api_key=KEY`` printed ``repeat with: ... api_key=KEY``
before pytest refused it; a look-alike letter in ``api_key`` and a key given as ``api_key_env``
printed the value back.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_jeval.cli import main

SECRET = "hunter2-Pa55w0rd-Zq7"
PASSWORD = "hunter2_Pa55w0rd_Zq7"  # a key that is also a valid variable name
KEY = "sk-proj-" + "Zq7x" * 8


def _jeval(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out + err


@pytest.mark.parametrize(("argv", "message"), [
    (["--base-url", f"http://user:{SECRET}@127.0.0.1:9/v1"], "--base-url: Value error, a URL with credentials"),
    (["--judge-model", "j", "--judge-base-url", f"http://{SECRET}@127.0.0.1:9/v1"], "--judge-base-url: "),
    (["--", "--jeval-set", f"models.0.api_key={KEY}"], "--jeval-set models.0.api_key=…: refused"),
    (["--", f"--jeval-set=models.0.api_key={KEY}"], "--jeval-set models.0.api_key=…: refused"),
    (["--", "--jeval-set", f"models.0.\u0430pi_key={KEY}"], "not plain ASCII"),  # a Cyrillic a
    (["--", "--jeval-set", f"models.0.api_key_env={KEY}"], "--jeval-set models.0.api_key_env=…: refused"),
    (["--", "--jeval-set", f"models.0.base_url=http://u:{SECRET}@h/v1"], "--jeval-set models.0.base_url=…: refused"),
    (["--", "--jeval-set", f"models.0.api_key_env={SECRET}"], "must be the name of an environment variable"),
    (["--api-key-env", PASSWORD], "--api-key-env: environment variable (the name given is not spelled like a"),
    (["--", "--jeval-set", f"models.0.api_key_env={PASSWORD}"], "may be a key: not shown) is not set"),
])
def test_jeval_run_refuses_keys_and_credentials_without_repeating_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str],
        message: str) -> None:
    monkeypatch.chdir(tmp_path)
    status, text = _jeval(capsys, "run", "-b", "quickstart", "-m", "some-model", "-o", "out", *argv)
    assert status == 2 and message in text, text
    assert SECRET not in text and KEY not in text and PASSWORD not in text
    assert "repeat with" not in text and "Traceback" not in text
    assert not (tmp_path / "out").exists()  # no suite was written


SUITE = """
[run]
output_dir = "out"

[[models]]
name = "m"
base_url = "{url}"

[[benchmarks]]
name = "quickstart"
"""


@pytest.mark.parametrize(("url", "args", "env", "message"), [
    (f"http://user:{SECRET}@127.0.0.1:9/v1", (), {}, "models[0].base_url: Value error, a URL with credentials"),
    ("http://127.0.0.1:9/v1", ("--jeval-set", f"models.0.base_url=http://user:{SECRET}@127.0.0.1:9/v1"), {},
     "--jeval-set models.0.base_url=…: refused"),
    ("", (), {"JEVAL_BASE_URL": f"http://user:{SECRET}@127.0.0.1:9/v1"}, "$JEVAL_BASE_URL: a URL with credentials"),
    ("http://127.0.0.1:9/v1", ("--jeval-set", f"models.0.api_key_env={KEY}"), {}, "api_key_env=…: refused"),
    ("http://127.0.0.1:9/v1", ("--jeval-set", f"models.0.\u0430pi_key={KEY}"), {}, "not plain ASCII"),
])
def test_pytest_refuses_credentials_in_urls_without_repeating_them(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, url: str, args: tuple[str, ...],
        env: dict[str, str], message: str) -> None:
    text = SUITE.format(url=url) if url else SUITE.replace('base_url = "{url}"\n', "")
    (pytester.path / "suite.toml").write_text(textwrap.dedent(text))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", *args)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert message in output and "INTERNALERROR" not in output, output
    assert SECRET not in output and KEY not in output

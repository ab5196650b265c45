"""The Google Sheets export through gspread's own client, against the local fake of the Sheets API."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator

import pytest

from tests.support.gsm import JevalProject

pytest.importorskip("gspread", reason="gspread is not installed (pip install 'pytest-jeval[sheets]')")
pytest.importorskip("google.oauth2.service_account", reason="google-auth is not installed")

from pytest_jeval.exports.plugin import ExportPair
from pytest_jeval.exports.sheets import API_URL_ENV, HEADER, SheetsSettings, export
from pytest_jeval.testing.fake_sheets import FakeSheets, make_service_account, parse_range

BOOK = "1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.fixture
def fake(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSheets]:
    """A running fake with one spreadsheet, a service-account key file ``sa.json`` it trusts, and the API URL set."""
    with FakeSheets() as server:
        info, public = make_service_account(server.token_uri)
        server.public_key, server.client_email = public, info["client_email"]
        server.add_spreadsheet(BOOK)
        (pytester.path / "sa.json").write_text(json.dumps(info))
        monkeypatch.setenv(API_URL_ENV, server.base_url)
        yield server


def _keys(extra: str = "") -> str:
    return f'sheets_spreadsheet_id = "{BOOK}"\nsheets_credentials_path = "sa.json"\n{extra}'


def test_one_row_per_pair_with_the_header_once_through_gspread(jeval_project: JevalProject, fake: FakeSheets) -> None:
    p = jeval_project
    suite = p.suite(extra_run=_keys())
    result = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # what the samples made it
    result.stdout.fnmatch_lines([f"jeval: Google Sheets: appended 1 row(s) to 'Results' of spreadsheet {BOOK}"])
    assert fake.worksheets(BOOK) == ["Sheet1", "Results"]  # made when missing
    header, row = fake.values(BOOK, "Results")
    assert header == list(HEADER)
    s = p.summary()
    got = dict(zip(HEADER, row))
    assert datetime.datetime.fromisoformat(got["timestamp"]).tzinfo is not None
    assert (got["suite"], got["benchmark"], got["model"]) == ("test-suite", "gsm8k", "test-model")
    assert got["accuracy"] == s["accuracy"] and [got["accuracy_ci_low"], got["accuracy_ci_high"]] == s["accuracy_ci"]
    assert (got["samples"], got["errors"]) == (s["total_samples"], s["errors"]) == (10, 1)
    assert got["latency_p50_s"] == s["latency_stats"]["median"]
    assert got["total_tokens"] == s["total_prompt_tokens"] + s["total_completion_tokens"]
    assert got["cost_usd"] == ("" if s["total_cost_usd"] is None else s["total_cost_usd"])
    assert got["energy_joules"] == ""  # no telemetry: an empty cell, not 0

    # the token first, then only authorized Sheets calls (metadata, values get, batchUpdate, append)
    log = fake.requests
    assert (log[0]["method"], log[0]["path"]) == ("POST", "/token")
    assert all(r["authorized"] and r["path"].startswith(f"/v4/spreadsheets/{BOOK}") for r in log[1:])
    assert any(r["path"].endswith(":append") and r["query"]["valueInputOption"] == "RAW" for r in log)

    again = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    rows = fake.values(BOOK, "Results")
    assert len(rows) == 3 and rows[0] == list(HEADER) and rows[2][2:4] == ["gsm8k", "test-model"]


def test_an_export_failure_is_reported_and_the_results_and_exit_status_stand(jeval_project: JevalProject,
                                                                             fake: FakeSheets) -> None:
    p = jeval_project
    suite = p.suite(extra_run=_keys().replace(BOOK, "no-such-spreadsheet"))
    result = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["jeval: Google Sheets export failed (SpreadsheetNotFound*); the results in * are "
                                 "complete, and the exit status is unchanged"])
    assert len(p.records()) == 10 and p.summary()["total_samples"] == 10


def test_a_worksheet_with_another_header_is_left_alone(pytester: pytest.Pytester, fake: FakeSheets) -> None:
    fake.add_spreadsheet(BOOK, sheets={"Results": [["name", "score"], ["x", 1]]})
    pair = ExportPair("gsm8k", "m", {"accuracy": 0.5, "accuracy_ci": [0.1, 0.9]}, [])
    settings = SheetsSettings(BOOK, "Results", pytester.path / "sa.json", "s")
    with pytest.raises(Exception, match="starts with another header row"):
        export(settings, [pair])
    assert fake.values(BOOK, "Results") == [["name", "score"], ["x", 1]]


def test_the_fake_refuses_a_key_it_does_not_know(pytester: pytest.Pytester, fake: FakeSheets) -> None:
    stranger, _public = make_service_account(fake.token_uri, email=json.loads((pytester.path / "sa.json").read_text())
                                             ["client_email"])
    (pytester.path / "other.json").write_text(json.dumps(stranger))
    settings = SheetsSettings(BOOK, "Results", pytester.path / "other.json", "s")
    from google.auth.exceptions import RefreshError

    with pytest.raises(RefreshError, match="invalid_grant"):
        export(settings, [ExportPair("gsm8k", "m", {}, [])])
    assert fake.worksheets(BOOK) == ["Sheet1"] and not any(r["path"].startswith("/v4") for r in fake.requests)


@pytest.mark.parametrize(("run", "message"), [
    ('sheets_worksheet = "Mine"', "[run] sheets_worksheet set without sheets_spreadsheet_id"),
    (_keys().replace("sa.json", "missing.json"), "missing.json does not exist (a service-account JSON key"),
    (_keys().replace("sa.json", "bad.json"), 'is not a service-account key file (its "type" must be'),
    (_keys('sheets_worksheet = " "'), "[run] sheets_worksheet is blank"),
])
def test_bad_sheets_keys_are_usage_errors_before_any_request(jeval_project: JevalProject, fake: FakeSheets,
                                                             run: str, message: str) -> None:
    p = jeval_project
    (p.pytester.path / "bad.json").write_text(json.dumps({"type": "authorized_user"}))
    result = p.pytester.runpytest("--jeval-config", str(p.suite(extra_run=run)))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str() and "no samples were sent" in result.stderr.str()
    assert p.server.requests == [] and fake.requests == []


def test_a_missing_gspread_is_a_usage_error_naming_the_extra(jeval_project: JevalProject, fake: FakeSheets) -> None:
    p = jeval_project
    p.pytester.makeconftest("import sys\nsys.modules['gspread'] = None  # as if not installed\n")
    result = p.pytester.runpytest("--jeval-config", str(p.suite(extra_run=_keys())))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert ("[run] sheets_spreadsheet_id needs the optional package(s) gspread: pip install 'pytest-jeval[sheets]'"
            in result.stderr.str())
    assert p.server.requests == [] and fake.requests == []


def test_a1_ranges_as_gspread_sends_them() -> None:
    assert parse_range("'Results'!A1:1") == ("Results", (1, 1), (1, None))
    assert parse_range("Results") == ("Results", (None, None), (None, None))
    assert parse_range("'It''s'!B2:AA") == ("It's", (2, 2), (None, 27))
    assert parse_range("Sheet1!C3") == ("Sheet1", (3, 3), (3, 3))


def test_exports_need_pytest_jevals_writer(jeval_project: JevalProject, fake: FakeSheets) -> None:
    p = jeval_project
    p.pytester.makeconftest("class Sink:\n    pass\n\n"
                            "def pytest_jeval_write_results(config, plan):\n    return Sink()\n")
    result = p.pytester.runpytest("--jeval-config", str(p.suite(extra_run=_keys())))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "the Google Sheets export reads pytest-jeval's results, and a pytest_jeval_write_results hook" \
        in result.stderr.str()
    assert p.server.requests == [] and fake.requests == []

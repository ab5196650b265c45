"""Google Sheets export: one row per (benchmark, model) appended to a worksheet, through gspread.

The client is gspread's own (``gspread.Client`` on a google-auth ``AuthorizedSession``
made from a service-account key file). The worksheet is made when it is missing; the
header row (:data:`HEADER`) is written when the worksheet is empty, and a worksheet
whose first row is another header is left alone (the export fails, saying so), so rows
never land under the wrong columns.

``JEVAL_SHEETS_API_URL`` (optional) sends the Sheets API calls to another base URL
instead of ``https://sheets.googleapis.com`` (a proxy, an emulator, the test fake):
the session's transport adapter for that origin rewrites each request's URL. The OAuth
token endpoint is the key file's own ``token_uri``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_jeval.exports import ExportError, Send

if TYPE_CHECKING:
    from pytest_jeval.exports import ExportPair
    from pytest_jeval.suite.config import Run
    from pytest_jeval.suite.plan import EvalPlan

#: The modules the export needs (the ``pytest-jeval[sheets]`` extra).
MODULES = ("gspread", "google.auth", "google.oauth2")

#: The only scope asked for: read and write spreadsheets (not Drive).
SCOPES = ("https://www.googleapis.com/auth/spreadsheets",)

#: Where gspread sends Sheets API calls; ``JEVAL_SHEETS_API_URL`` replaces this origin.
SHEETS_ORIGIN = "https://sheets.googleapis.com"
API_URL_ENV = "JEVAL_SHEETS_API_URL"

#: gspread's default key file when ``sheets_credentials_path`` is unset.
DEFAULT_CREDENTIALS = Path("~/.config/gspread/service_account.json")

#: The columns of each row, in order.
HEADER = (
    "timestamp", "suite", "benchmark", "model", "accuracy", "accuracy_ci_low", "accuracy_ci_high",
    "samples", "errors", "latency_p50_s", "total_tokens", "cost_usd", "energy_joules",
)


class SheetsError(ExportError):
    """``sheets_*`` keys or a worksheet that cannot be used."""


@dataclasses.dataclass(frozen=True)
class SheetsSettings:
    """The ``[run] sheets_*`` keys, checked; the credentials path resolved."""

    spreadsheet_id: str
    worksheet: str
    credentials: Path
    suite: str


def settings_from(run: Run, suite: str, suite_path: Path) -> SheetsSettings | None:
    """The Sheets settings of ``[run]``, or None when ``sheets_spreadsheet_id`` is unset; raises
    :class:`SheetsError` when another ``sheets_*`` key is set without it (never accepted and ignored)."""
    others = [k for k in ("sheets_credentials_path",) if getattr(run, k)]
    if run.sheets_worksheet != "Results":
        others.insert(0, "sheets_worksheet")
    if not run.sheets_spreadsheet_id.strip():
        if others:
            raise SheetsError(f"[run] {', '.join(others)} set without sheets_spreadsheet_id "
                              "(the Google Sheets export is off without it)")
        return None
    if not run.sheets_worksheet.strip():
        raise SheetsError("[run] sheets_worksheet is blank")
    if run.sheets_credentials_path:
        path = Path(run.sheets_credentials_path).expanduser()
        credentials = path if path.is_absolute() else suite_path.parent / path
    else:
        credentials = DEFAULT_CREDENTIALS.expanduser()
    return SheetsSettings(run.sheets_spreadsheet_id.strip(), run.sheets_worksheet, credentials, suite)


def check_credentials(settings: SheetsSettings) -> None:
    """Raise :class:`SheetsError` unless the key file is a readable service-account key (no request is made)."""
    _credentials(settings)


def _credentials(settings: SheetsSettings) -> Any:
    from google.oauth2.service_account import Credentials

    path = settings.credentials
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SheetsError(f"[run] sheets_credentials_path: {path} does not exist (a service-account JSON key "
                          "file is needed)") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SheetsError(f"[run] sheets_credentials_path: {path} is not readable JSON "
                          f"({type(exc).__name__})") from None
    if not isinstance(info, dict) or info.get("type") != "service_account":
        raise SheetsError(f"[run] sheets_credentials_path: {path} is not a service-account key file "
                          '(its "type" must be "service_account")')
    try:
        return Credentials.from_service_account_info(info, scopes=list(SCOPES))  # type: ignore[no-untyped-call]
    except (ValueError, KeyError) as exc:  # the message names the missing field, never the key
        raise SheetsError(f"[run] sheets_credentials_path: {path} is not a usable service-account key "
                          f"({type(exc).__name__}: {str(exc)[:200]})") from None


def _cell(value: Any) -> Any:
    """A value as a cell: finite numbers and strings as they are, anything else empty."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value if math.isfinite(value) else ""
    return str(value)


def _tokens(summary: dict[str, Any]) -> float | None:
    parts = [summary.get("total_prompt_tokens"), summary.get("total_completion_tokens")]
    known = [p for p in parts if isinstance(p, (int, float)) and not isinstance(p, bool)]
    return float(sum(known)) if known else None


def row(pair: ExportPair, suite: str, timestamp: str) -> list[Any]:
    """One pair's row, in :data:`HEADER` order."""
    s = pair.summary
    ci = s.get("accuracy_ci") or [None, None]
    latency = s.get("latency_stats") or {}
    values = [
        timestamp, suite, pair.benchmark, pair.model, s.get("accuracy"), ci[0], ci[1],
        s.get("total_samples"), s.get("errors"), latency.get("median"), _tokens(s),
        s.get("total_cost_usd"), s.get("total_energy_joules"),
    ]
    return [_cell(v) for v in values]


def _session(credentials: Any) -> Any:
    """An authorized requests session; with ``JEVAL_SHEETS_API_URL`` set, Sheets calls go there."""
    from google.auth.transport.requests import AuthorizedSession

    from pytest_jeval.exports._transport import RebaseAdapter

    session = AuthorizedSession(credentials)  # type: ignore[no-untyped-call]
    base = os.environ.get(API_URL_ENV, "").rstrip("/")
    if base:
        session.mount(SHEETS_ORIGIN + "/", RebaseAdapter(SHEETS_ORIGIN, base))
    return session


def export(settings: SheetsSettings, pairs: Sequence[ExportPair], *, now: datetime.datetime | None = None) -> str:
    """Append one row per pair (and the header to an empty worksheet); the terminal line."""
    import gspread

    credentials = _credentials(settings)
    client = gspread.Client(auth=credentials, session=_session(credentials))
    client.set_timeout(60.0)
    book = client.open_by_key(settings.spreadsheet_id)
    try:
        sheet = book.worksheet(settings.worksheet)
    except gspread.WorksheetNotFound:
        sheet = book.add_worksheet(settings.worksheet, rows=1000, cols=len(HEADER))
    first = sheet.row_values(1)
    stamp = (now or datetime.datetime.now(datetime.timezone.utc)).isoformat(timespec="seconds")
    rows = [row(pair, settings.suite, stamp) for pair in pairs]
    if not any(str(v).strip() for v in first):
        rows.insert(0, list(HEADER))
    elif [str(v) for v in first] != list(HEADER):
        raise SheetsError(f"worksheet {settings.worksheet!r} starts with another header row "
                          f"({', '.join(str(v) for v in first[:4])}, ...); rows were not appended: use another "
                          "sheets_worksheet or an empty one")
    sheet.append_rows(rows, value_input_option=gspread.utils.ValueInputOption.raw, table_range="A1")
    return (f"jeval: Google Sheets: appended {len(pairs)} row(s) to {settings.worksheet!r} "
            f"of spreadsheet {settings.spreadsheet_id}")


class SheetsExporter:
    """The ``sheets`` exporter: on when ``[run] sheets_spreadsheet_id`` is set."""

    title = "Google Sheets"
    extra = "sheets"
    modules = MODULES
    key = "sheets_spreadsheet_id"

    def configure(self, plan: EvalPlan, named: bool) -> Send | None:
        """The sender for the suite's ``sheets_*`` keys (the key file checked now); None when the id is unset."""
        settings = settings_from(plan.suite.run, plan.suite.meta.name or plan.path.stem, plan.path)
        if settings is None:
            if named:
                raise SheetsError("[run] exporters names sheets, which needs sheets_spreadsheet_id")
            return None
        check_credentials(settings)
        return lambda pairs: export(settings, pairs)


EXPORTER = SheetsExporter()
"""The ``sheets`` entry of :data:`~pytest_jeval.exports.EXPORTERS`."""

"""A local fake of the Google Sheets API v4 and of Google's OAuth token endpoint, for tests.

:class:`FakeSheets` serves, on ``127.0.0.1``, exactly what gspread calls for the export
(``pytest_jeval.exports.sheets``), in the API's own JSON shapes:

* ``POST /token``: the service-account grant (``urn:ietf:params:oauth:grant-type:jwt-bearer``);
  the assertion's RS256 signature is checked against the public key given, its audience
  (Google's token endpoint, which google-auth names whatever the ``token_uri``), issuer and
  scope; answers a bearer token;
* ``GET /v4/spreadsheets/{id}``: spreadsheet metadata (``spreadsheets.get``);
* ``POST /v4/spreadsheets/{id}:batchUpdate``: ``addSheet`` requests only;
* ``GET /v4/spreadsheets/{id}/values/{range}``: ``spreadsheets.values.get``;
* ``PUT /v4/spreadsheets/{id}/values/{range}``: ``spreadsheets.values.update``;
* ``POST /v4/spreadsheets/{id}/values/{range}:append``: ``spreadsheets.values.append``.

Every ``/v4`` call needs a token the fake issued (else 401). Ranges are A1 notation
(``'Results'!A1:1``, ``Results``, ``Sheet1!A2:C``). Point the key file's ``token_uri`` at
:attr:`FakeSheets.token_uri` and ``JEVAL_SHEETS_API_URL`` at :attr:`FakeSheets.base_url`.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import urllib.parse
from collections.abc import Mapping
from typing import Any

JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SHEETS_SCOPE = "https://www.googleapis.com/auth/spreadsheets"
TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
"""The ``aud`` of a service account's grant assertion (google-auth sends it whatever the key's ``token_uri``)."""

Grid = list[list[Any]]


def make_service_account(token_uri: str, email: str = "jeval-test@fake-project.iam.gserviceaccount.com"
                         ) -> tuple[dict[str, Any], bytes]:
    """A throwaway service-account key (a fresh 2048-bit RSA key) whose ``token_uri`` is ``token_uri``:
    (the key file's JSON, the public key PEM to give :class:`FakeSheets`)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode("ascii")
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    info = {
        "type": "service_account",
        "project_id": "fake-project",
        "private_key_id": "0123456789abcdef",
        "private_key": private,
        "client_email": email,
        "client_id": "1234567890",
        "token_uri": token_uri,
    }
    return info, public


def parse_range(text: str) -> tuple[str, tuple[int | None, int | None], tuple[int | None, int | None]]:
    """An A1 range as (sheet title, (start row, start col), (end row, end col)), 1-based; None is open."""
    title, cells = text, ""
    if text.startswith("'"):
        i = 1
        while i < len(text):
            if text[i] == "'" and text[i + 1 : i + 2] == "'":
                i += 2
                continue
            if text[i] == "'":
                break
            i += 1
        title, cells = text[1:i].replace("''", "'"), text[i + 1 :].lstrip("!")
    elif "!" in text:
        title, cells = text.split("!", 1)
    if not cells:
        return title, (None, None), (None, None)
    start, _, end = cells.partition(":")
    first = _cell(start)
    return title, first, (_cell(end) if end else first)


def _cell(text: str) -> tuple[int | None, int | None]:
    match = re.fullmatch(r"([A-Za-z]*)(\d*)", text)
    if match is None or not text:
        raise ValueError(f"bad A1 cell {text!r}")
    col = 0
    for ch in match.group(1).upper():
        col = col * 26 + ord(ch) - 64
    return (int(match.group(2)) if match.group(2) else None), (col or None)


def _column_name(col: int) -> str:
    name = ""
    while col:
        col, rest = divmod(col - 1, 26)
        name = chr(65 + rest) + name
    return name


def _formatted(value: Any) -> Any:
    """A stored value as ``FORMATTED_VALUE`` renders it (a string)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Sheet:
    def __init__(self, sheet_id: int, title: str, index: int, rows: int = 1000, cols: int = 26) -> None:
        self.sheet_id, self.title, self.index = sheet_id, title, index
        self.row_count, self.col_count = rows, cols
        self.grid: Grid = []

    def properties(self) -> dict[str, Any]:
        return {"sheetId": self.sheet_id, "title": self.title, "index": self.index, "sheetType": "GRID",
                "gridProperties": {"rowCount": self.row_count, "columnCount": self.col_count}}

    def used_rows(self) -> int:
        rows = len(self.grid)
        while rows and not any(v not in ("", None) for v in self.grid[rows - 1]):
            rows -= 1
        return rows

    def write(self, row: int, col: int, values: Grid) -> None:
        for r, line in enumerate(values):
            while len(self.grid) < row + r:
                self.grid.append([])
            target = self.grid[row + r - 1]
            while len(target) < col - 1 + len(line):
                target.append("")
            for c, value in enumerate(line):
                target[col - 1 + c] = value
        self.row_count = max(self.row_count, len(self.grid))

    def read(self, start: tuple[int | None, int | None], end: tuple[int | None, int | None]) -> Grid:
        r0, c0 = start[0] or 1, start[1] or 1
        r1 = end[0] if end[0] is not None else len(self.grid)
        out = []
        for line in self.grid[r0 - 1 : r1]:
            c1 = end[1] if end[1] is not None else len(line)
            cells = list(line[c0 - 1 : c1])
            while cells and cells[-1] in ("", None):
                cells.pop()
            out.append(cells)
        while out and not out[-1]:
            out.pop()
        return out


class FakeSheets:
    """The fake server; a context manager. Its state is :meth:`values`, its log :attr:`requests`."""

    def __init__(self, public_key: bytes | None = None, *, client_email: str | None = None) -> None:
        self.public_key = public_key
        """The service account's public key: the token endpoint checks assertions with it (None: accepts any)."""
        self.client_email = client_email
        self.requests: list[dict[str, Any]] = []
        """``{"method", "path", "query", "authorized"}`` per request, oldest first (``path`` decoded)."""
        self.tokens: set[str] = set()
        self._books: dict[str, tuple[str, dict[str, _Sheet]]] = {}
        self._lock = threading.Lock()
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- set-up and state ---------------------------------------------------------------
    def add_spreadsheet(self, spreadsheet_id: str, title: str = "Fake spreadsheet",
                        sheets: Mapping[str, Grid] | None = None) -> None:
        """A spreadsheet with these worksheets (title -> rows); one empty ``Sheet1`` by default."""
        book: dict[str, _Sheet] = {}
        for index, (name, grid) in enumerate((sheets or {"Sheet1": []}).items()):
            sheet = book[name] = _Sheet(index, name, index)
            sheet.write(1, 1, [list(r) for r in grid])
        with self._lock:
            self._books[spreadsheet_id] = (title, book)

    def values(self, spreadsheet_id: str, worksheet: str) -> Grid:
        """The stored cells of one worksheet, as written (numbers stay numbers)."""
        with self._lock:
            return [list(r) for r in self._books[spreadsheet_id][1][worksheet].grid]

    def worksheets(self, spreadsheet_id: str) -> list[str]:
        """The worksheet titles of a spreadsheet, in order."""
        with self._lock:
            return list(self._books[spreadsheet_id][1])

    # -- serving --------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (the Sheets API base: ``JEVAL_SHEETS_API_URL``)."""
        if self._server is None:
            raise RuntimeError("FakeSheets is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def token_uri(self) -> str:
        """The OAuth token endpoint (the key file's ``token_uri``)."""
        return self.base_url + "/token"

    def start(self) -> str:
        """Serve on a free port of 127.0.0.1; the base URL."""
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                fake._handle(self, "GET")

            def do_POST(self) -> None:
                fake._handle(self, "POST")

            def do_PUT(self) -> None:
                fake._handle(self, "PUT")

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-sheets", daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving (the state and the log are kept)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> FakeSheets:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- requests ------------------------------------------------------------------------
    def _handle(self, handler: http.server.BaseHTTPRequestHandler, method: str) -> None:
        split = urllib.parse.urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        query = dict(urllib.parse.parse_qsl(split.query))
        auth = handler.headers.get("Authorization", "")
        authorized = auth.startswith("Bearer ") and auth[7:] in self.tokens
        with self._lock:
            self.requests.append({"method": method, "path": urllib.parse.unquote(split.path), "query": query,
                                  "authorized": authorized})
        try:
            if split.path == "/token" and method == "POST":
                status, reply = self._token(body)
            elif not split.path.startswith("/v4/spreadsheets/"):
                status, reply = 404, _error(404, f"no such endpoint {split.path}", "NOT_FOUND")
            elif not authorized:
                status, reply = 401, _error(401, "Request had invalid authentication credentials.",
                                            "UNAUTHENTICATED")
            else:
                status, reply = self._sheets(method, split.path[len("/v4/spreadsheets/"):], query, body)
        except (ValueError, KeyError, TypeError) as exc:
            status, reply = 400, _error(400, f"Invalid request: {exc}", "INVALID_ARGUMENT")
        data = json.dumps(reply).encode("utf-8")
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=UTF-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _token(self, body: bytes) -> tuple[int, dict[str, Any]]:
        form = dict(urllib.parse.parse_qsl(body.decode("utf-8")))
        if form.get("grant_type") != JWT_GRANT or "assertion" not in form:
            return 400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type."}
        from google.auth import exceptions, jwt

        try:
            if self.public_key is not None:
                claims = jwt.decode(form["assertion"], certs=self.public_key.decode("ascii"),  # type: ignore[no-untyped-call]
                                    audience=TOKEN_AUDIENCE)
            else:
                claims = jwt.decode(form["assertion"], verify=False)  # type: ignore[no-untyped-call]
        except (ValueError, exceptions.GoogleAuthError):
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        if self.client_email is not None and claims.get("iss") != self.client_email:
            return 400, {"error": "invalid_grant", "error_description": "Invalid issuer."}
        if SHEETS_SCOPE not in str(claims.get("scope", "")).split():
            return 400, {"error": "invalid_scope", "error_description": "The spreadsheets scope is missing."}
        with self._lock:
            token = f"fake-access-token-{len(self.tokens) + 1}"
            self.tokens.add(token)
        return 200, {"access_token": token, "expires_in": 3600, "token_type": "Bearer"}

    def _sheets(self, method: str, rest: str, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        book_id, _, tail = rest.partition("/")
        action = ""
        if not tail and ":" in book_id:
            book_id, action = book_id.split(":", 1)
        with self._lock:
            found = self._books.get(book_id)
            if found is None:
                return 404, _error(404, "Requested entity was not found.", "NOT_FOUND")
            title, book = found
            if not tail and not action and method == "GET":
                return 200, {"spreadsheetId": book_id, "properties": {"title": title, "locale": "en_US",
                                                                      "timeZone": "Etc/GMT"},
                             "sheets": [{"properties": s.properties()} for s in book.values()]}
            if action == "batchUpdate" and method == "POST":
                return self._batch_update(book_id, book, json.loads(body))
            if tail.startswith("values/"):
                return self._values(method, book_id, book, tail[len("values/"):], query, body)
        return 404, _error(404, f"no such endpoint {method} {rest}", "NOT_FOUND")

    @staticmethod
    def _batch_update(book_id: str, book: dict[str, _Sheet], request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        replies = []
        for entry in request["requests"]:
            if set(entry) != {"addSheet"}:
                return 400, _error(400, f"unsupported request {sorted(entry)}", "INVALID_ARGUMENT")
            props = entry["addSheet"]["properties"]
            name = props["title"]
            if name in book:
                return 400, _error(400, f'A sheet with the name "{name}" already exists.', "INVALID_ARGUMENT")
            grid = props.get("gridProperties", {})
            sheet = book[name] = _Sheet(max((s.sheet_id for s in book.values()), default=-1) + 1, name, len(book),
                                        int(grid.get("rowCount", 1000)), int(grid.get("columnCount", 26)))
            replies.append({"addSheet": {"properties": sheet.properties()}})
        return 200, {"spreadsheetId": book_id, "replies": replies}

    @staticmethod
    def _values(method: str, book_id: str, book: dict[str, _Sheet], raw_range: str, query: dict[str, str],
                body: bytes) -> tuple[int, dict[str, Any]]:
        append = raw_range.endswith(":append")
        if append:
            raw_range = raw_range[: -len(":append")]
        a1 = urllib.parse.unquote(raw_range)
        title, start, end = parse_range(a1)
        sheet = book.get(title)
        if sheet is None:
            return 400, _error(400, f"Unable to parse range: {a1}", "INVALID_ARGUMENT")
        if method == "GET" and not append:
            values = sheet.read(start, end)
            if query.get("valueRenderOption") != "UNFORMATTED_VALUE":
                values = [[_formatted(v) for v in line] for line in values]
            reply: dict[str, Any] = {"range": a1, "majorDimension": "ROWS"}
            if values:
                reply["values"] = values
            return 200, reply
        if query.get("valueInputOption") not in ("RAW", "USER_ENTERED"):
            return 400, _error(400, "'valueInputOption' is required", "INVALID_ARGUMENT")
        values = json.loads(body)["values"]
        if append and method == "POST":
            row, col = sheet.used_rows() + 1, start[1] or 1
        elif method == "PUT" and not append:
            row, col = start[0] or 1, start[1] or 1
        else:
            return 404, _error(404, f"no such endpoint {method} values", "NOT_FOUND")
        sheet.write(row, col, values)
        width = max((len(v) for v in values), default=0)
        written = f"'{title}'!{_column_name(col)}{row}:{_column_name(col + max(width, 1) - 1)}{row + len(values) - 1}"
        updates = {"spreadsheetId": book_id, "updatedRange": written, "updatedRows": len(values),
                   "updatedColumns": width, "updatedCells": sum(len(v) for v in values)}
        if append:
            return 200, {"spreadsheetId": book_id, "tableRange": f"'{title}'!A1", "updates": updates}
        return 200, updates


def _error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}

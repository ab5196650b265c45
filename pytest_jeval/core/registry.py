"""The one registry helper: named members of a family, built in or installed, looked up by name.

Every family of pytest-jeval (benchmarks, scorers, evaluators, tools, named agents, external agent
backends, engines, sandbox providers, exporters) is a :class:`Registry`. A member comes from one of
three places, looked at in this order:

1. **registered in code**: ``REGISTRY.register("name", obj)`` (or as a decorator), by the family's
   own modules or by a plugin at import time;
2. **declared built-ins**: ``builtins={"name": "module:attr"}``, imported on first use, so that
   reading a family's names stays cheap and the framework never imports content up front; and
   ``modules=("package",)``, packages whose every public submodule registers its members when
   imported (a new built-in member is a new file), imported on the first lookup;
3. **installed packages**: entry points of the group ``pytest_jeval.<family>`` (``name =
   "module:attr"``, or ``name = "module"`` for a module that registers its members when imported),
   read once, on the first lookup that needs them.

A name a family does not know is a :class:`RegistryError` (a ``KeyError``) that lists the names it
does know, so a suite can refuse a misspelling before any request. Nothing here imports the rest
of the package.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

_PACKAGE = __name__.split(".")[0]

GROUP_PREFIX = "pytest_jeval."
"""Entry-point groups are ``pytest_jeval.<family>`` (``pytest_jeval.tools``, ``pytest_jeval.engines``, ...)."""


class RegistryError(KeyError):
    """An unknown name, a name taken twice, or an installed member that cannot be loaded."""

    def __str__(self) -> str:  # KeyError quotes its message; say it as written
        return str(self.args[0]) if self.args else ""


def load_reference(ref: str) -> Any:
    """The object ``"package.module:attr.path"`` names (a module when there is no ``:attr``)."""
    module_name, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


def entry_point_label(ep: importlib.metadata.EntryPoint) -> str:
    """``entry point NAME = 'VALUE' (group G of DIST VERSION)`` for messages."""
    dist = getattr(ep, "dist", None)
    origin = f" of {dist.name} {dist.version}" if dist is not None else ""
    return f"entry point {ep.name} = {ep.value!r} (group {ep.group}{origin})"


class Registry(Generic[T]):
    """Named members of one family (see the module docstring for where members come from).

    ``check`` validates a member when it is registered or loaded (raise ``TypeError`` or
    ``ValueError`` with the reason) and returns what to store; ``kind`` names a member in
    messages ("tool", "engine"); ``same`` says whether a member registered again under a taken
    name is the one already there (a module imported twice), by default for functions and
    classes their module and qualified name, for other objects equality.
    """

    def __init__(self, family: str, *, kind: str, builtins: Mapping[str, str] | None = None,
                 modules: Sequence[str] = (), check: Callable[[str, Any], T] | None = None,
                 same: Callable[[T, T], bool] | None = None) -> None:
        self.family = family
        self.kind = kind
        self.group = GROUP_PREFIX + family
        self._builtins = dict(builtins or {})
        self._modules = tuple(modules)
        self._modules_loaded = not self._modules
        self._check = check
        self._same = same or _same
        self._members: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._installed: dict[str, importlib.metadata.EntryPoint] | None = None
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Registry({self.family!r}, {len(self.names())} members)"

    # -- registering ------------------------------------------------------------------
    @overload
    def register(self, name: str, member: None = None, *, replace: bool = False,
                 origin: str | None = None) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, member: T, *, replace: bool = False, origin: str | None = None) -> T: ...

    def register(self, name: str, member: T | None = None, *, replace: bool = False,
                 origin: str | None = None) -> Any:
        """Register ``member`` as ``name``; without ``member``, a decorator that registers what it decorates.

        Registering another object under a taken name is a :class:`RegistryError` unless ``replace``;
        registering the same object again is a no-op (modules may be imported twice). ``origin`` says where
        the member comes from (by default ``built in`` for pytest-jeval's own, else ``registered in code``).
        """

        def add(obj: Any) -> Any:
            checked = self._validated(name, obj, origin)
            where = origin or ("built in" if describe(obj).startswith(_PACKAGE + ".") else "registered in code")
            with self._lock:
                current = self._members.get(name)
                if current is not None and current is not checked and not replace and not self._same(current, checked):
                    raise RegistryError(f"{self.kind} name {name!r} of {describe(checked)} is already taken by "
                                        f"{describe(current)} ({self._origins.get(name, 'registered in code')})")
                self._members[name] = checked
                self._origins[name] = where
            return obj

        return add(member) if member is not None else add

    def unregister(self, name: str) -> None:
        """Forget a member registered in code (tests; a plugin unloading)."""
        with self._lock:
            self._members.pop(name, None)
            self._origins.pop(name, None)

    def _validated(self, name: str, obj: Any, origin: str | None = None) -> T:
        if not isinstance(name, str) or not name:
            raise RegistryError(f"{_article(self.kind)} {self.kind} needs a non-empty name, got {name!r}")
        if self._check is None:
            return obj  # type: ignore[no-any-return]
        try:
            return self._check(name, obj)
        except (TypeError, ValueError) as exc:
            where = origin or f"{self.kind} {name!r}"
            raise RegistryError(f"{where}: {exc}" if origin else f"{where} cannot be registered: {exc}") from None

    # -- looking up -------------------------------------------------------------------
    def get(self, name: str) -> T:
        """The member registered as ``name``: registered in code, else a declared built-in, else an
        installed entry point; :class:`RegistryError` naming the known members otherwise."""
        with self._lock:
            found = self._members.get(name)
            if found is None and not self._modules_loaded:
                self.load_modules()
                found = self._members.get(name)
            if found is not None:
                return found
            ref = self._builtins.get(name)
            if ref is not None:
                return self._load(name, lambda: load_reference(ref), "built in")
            ep = self.installed().get(name)
            if ep is not None:
                return self._load(name, ep.load, entry_point_label(ep))
        raise RegistryError(f"unknown {self.kind} {name!r}; {self.known_text()}")

    def _load(self, name: str, loader: Callable[[], Any], origin: str) -> T:
        where = origin if origin.startswith("entry point") else f"built-in {self.kind} {name!r}"
        try:
            obj = loader()
        except Exception as exc:
            raise RegistryError(f"{where} failed to load: {type(exc).__name__}: {exc}") from exc
        if _is_module(obj):  # a module that registers its members when imported
            found = self._members.get(name)
            if found is None:
                raise RegistryError(f"{where}: module {obj.__name__} registers no {self.kind} named {name!r}")
            return found
        self.register(name, obj, origin=origin)
        return self._members[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def names(self) -> list[str]:
        """Every name the family knows, sorted: registered, built in and installed (nothing is imported)."""
        with self._lock:
            self.load_modules()
            return sorted({*self._members, *self._builtins, *self.installed()})

    def items(self) -> Iterator[tuple[str, T]]:
        """(name, member) for every name, loading the members not loaded yet (sorted by name)."""
        for name in self.names():
            yield name, self.get(name)

    def origin(self, name: str) -> str:
        """Where ``name`` comes from: ``built in``, ``registered in code`` or its entry point."""
        with self._lock:
            if name in self._origins:
                return self._origins[name]
            if name in self._builtins:
                return "built in"
            ep = self.installed().get(name)
            if ep is not None:
                return entry_point_label(ep)
        raise RegistryError(f"unknown {self.kind} {name!r}; {self.known_text()}")

    def is_builtin(self, name: str) -> bool:
        """True for a declared built-in (whether loaded yet or not)."""
        return name in self._builtins

    def known_text(self) -> str:
        """``the registered tools are: a, b, c`` (or ``no tool is registered``)."""
        names = self.names()
        if not names:
            return f"no {self.kind} is registered"
        return f"the registered {self.kind}s are: {', '.join(names)}"

    def load_modules(self) -> None:
        """Import the built-in member modules once (each public submodule of each package in ``modules``)."""
        if self._modules_loaded:
            return
        self._modules_loaded = True
        for name in self._modules:
            for module in _submodules(name):
                before = set(self._members)
                try:
                    importlib.import_module(module)
                except Exception:
                    self._modules_loaded = False  # retried on the next lookup, not left half-loaded
                    raise
                for added in set(self._members) - before:
                    self._origins[added] = "built in"

    def entry_points(self) -> list[importlib.metadata.EntryPoint]:
        """Every entry point of this family's group, sorted by name and value (nothing is imported)."""
        return sorted(importlib.metadata.entry_points(group=self.group), key=lambda e: (e.name, e.value))

    def installed(self) -> dict[str, importlib.metadata.EntryPoint]:
        """The entry points of this family's group, by name (read once; nothing is imported)."""
        if self._installed is None:
            found: dict[str, importlib.metadata.EntryPoint] = {}
            for ep in self.entry_points():
                if ep.name in self._builtins:
                    continue  # a built-in name wins; `jeval list` shows the clash (check_installed)
                found.setdefault(ep.name, ep)
            self._installed = found
        return self._installed

    def check_installed(self) -> list[str]:
        """Problems with this family's entry points, one line each: a built-in name taken, or one name
        claimed by two distributions (the first in sorted order is used)."""
        problems: list[str] = []
        seen: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in self.entry_points():
            if ep.name in self._builtins:
                problems.append(f"{entry_point_label(ep)}: {ep.name!r} is the name of a built-in {self.kind}")
            elif ep.name in seen and seen[ep.name].value != ep.value:
                problems.append(f"{entry_point_label(ep)}: {ep.name!r} is already installed as "
                                f"{seen[ep.name].value!r}")
            seen.setdefault(ep.name, ep)
        return problems

    def refresh(self) -> None:
        """Read the entry points again (after installing a package in the same process)."""
        with self._lock:
            self._installed = None


def describe(member: Any) -> str:
    """``module.QualName`` of a class or function (or of a member's ``fn``), else its ``repr``."""
    target = member if hasattr(member, "__qualname__") else getattr(member, "fn", member)
    qualname = getattr(target, "__qualname__", None)
    if isinstance(qualname, str):
        return f"{getattr(target, '__module__', '?')}.{qualname}"
    return repr(member)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _submodules(name: str) -> list[str]:
    """``name`` and, for a package, each of its public submodules (sorted)."""
    import pkgutil

    module = importlib.import_module(name)
    path = getattr(module, "__path__", None)
    if path is None:
        return [name]
    return [name, *sorted(info.name for info in pkgutil.iter_modules(path, prefix=f"{name}.")
                          if not info.name.rsplit(".", 1)[-1].startswith("_"))]


def _is_module(obj: Any) -> bool:
    import types

    return isinstance(obj, types.ModuleType)


def _same(a: Any, b: Any) -> bool:
    """The same member re-created by a module imported twice (pytester drops and re-imports modules):
    for functions and classes the same module and qualified name, for other objects equality."""
    qualname = getattr(a, "__qualname__", None)
    if isinstance(qualname, str):
        return bool(getattr(a, "__module__", None) == getattr(b, "__module__", None)
                    and qualname == getattr(b, "__qualname__", None))
    try:
        return bool(a == b)
    except Exception:
        return False

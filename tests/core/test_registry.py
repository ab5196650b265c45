"""The one registry helper: named members registered in code, declared built-ins loaded on first use,
unknown names refused with the known ones listed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_jeval.core.registry import Registry, RegistryError


def _positive(name: str, member: object) -> int:
    if not isinstance(member, int) or member <= 0:
        raise ValueError("a positive number is needed")
    return member


def test_registered_and_built_in_members_are_found_by_name_and_listed_sorted() -> None:
    reg: Registry[object] = Registry("jeval_test_numbers", kind="number",
                                     builtins={"pi": "math:pi", "sep": "os:sep"})
    reg.register("two", 2)
    assert reg.names() == ["pi", "sep", "two"] and "pi" in reg and "three" not in reg
    assert reg.get("two") == 2 and reg.get("pi") == pytest.approx(3.14159, abs=1e-5)
    assert dict(reg.items()) == {"pi": reg.get("pi"), "sep": reg.get("sep"), "two": 2}
    assert reg.origin("pi") == "built in" and reg.origin("two") == "registered in code" and reg.is_builtin("sep")


def test_a_built_in_is_imported_on_first_lookup_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "jeval_lazy_member.py").write_text("VALUE = 42\n")
    (tmp_path / "jeval_broken_member.py").write_text("raise RuntimeError('broken on import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in ("jeval_lazy_member", "jeval_broken_member"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    reg: Registry[object] = Registry("jeval_test_lazy", kind="thing", builtins={
        "lazy": "jeval_lazy_member:VALUE", "broken": "jeval_broken_member:VALUE"})
    assert reg.names() == ["broken", "lazy"] and "jeval_lazy_member" not in sys.modules  # listing imports nothing
    assert reg.get("lazy") == 42 and "jeval_lazy_member" in sys.modules
    with pytest.raises(RegistryError, match="built-in thing 'broken' failed to load: RuntimeError: broken on import"):
        reg.get("broken")


def test_an_unknown_name_is_refused_naming_the_known_ones() -> None:
    reg: Registry[object] = Registry("jeval_test_known", kind="tool")
    with pytest.raises(RegistryError) as info:
        reg.get("hammer")
    assert str(info.value) == "unknown tool 'hammer'; no tool is registered"
    reg.register("saw", "a saw")
    reg.register("drill", "a drill")
    with pytest.raises(KeyError, match=r"unknown tool 'hammer'; the registered tools are: drill, saw"):
        reg.get("hammer")


def test_a_taken_name_and_a_member_the_check_refuses_are_errors() -> None:
    reg: Registry[int] = Registry("jeval_test_checked", kind="number", check=_positive)
    assert reg.register("one", 1) == 1
    reg.register("one", 1)  # the same member again: a module imported twice
    with pytest.raises(RegistryError, match=r"number name 'one' of .* is already taken"):
        reg.register("one", 7)
    reg.register("one", 7, replace=True)
    assert reg.get("one") == 7
    with pytest.raises(RegistryError, match="number 'minus' cannot be registered: a positive number is needed"):
        reg.register("minus", -1)
    with pytest.raises(RegistryError, match="needs a non-empty name"):
        reg.register("", 3)
    reg.unregister("one")
    assert reg.names() == []
    with pytest.raises(RegistryError, match="number 'five' cannot be registered"):
        reg.register("five")(lambda: 5)  # the decorator form checks what it decorates
    assert reg.register("six")(6) == 6 and reg.get("six") == 6

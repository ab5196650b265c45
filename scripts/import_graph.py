"""Print the package's import graph between its top-level entries, and the edges that run up a layer.

    python scripts/import_graph.py                      # the layers of .importlinter's "layers" contract
    python scripts/import_graph.py --layers map.json    # {"entry": layer_number, ...}, higher imports lower
    python scripts/import_graph.py --edges              # list every edge between top-level entries

Reads the source with ``ast`` (nothing is imported); counts every ``import`` statement, those under
``if TYPE_CHECKING:`` and inside functions included (each is shown with its kind under ``--edges``).
A top-level entry is a module or a package directly under the package root (``pytest_jeval/plan.py``,
``pytest_jeval/suite/``). An edge runs up a layer when its importer's layer is lower than the layer of
what it imports; content (``benchmarks``, ``judge_bench``, ``testing``) is outside the layers.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import json
import sys
from collections import Counter
from pathlib import Path

PACKAGE = "pytest_jeval"
CONTENT = ("benchmarks", "judge_bench", "testing")
"""Content: may import anything public; nothing in the framework may import it."""


def module_name(path: Path, root: Path) -> str:
    """``pytest_jeval/suite/plan.py`` -> ``pytest_jeval.suite.plan`` (a package's ``__init__`` -> the package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> list[tuple[str, str]]:
    """(imported module, kind) for each import in ``path``; kind is ``module``, ``function`` or ``type``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    mod = module_name(path, root)
    is_pkg = path.name == "__init__.py"
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            child_kind = kind
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                child_kind = "function" if kind == "module" else kind
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for sub in child.body:
                    visit_one(sub, "type")
                for sub in child.orelse:
                    visit_one(sub, child_kind)
                continue
            visit_one(child, child_kind)

    def visit_one(node: ast.AST, kind: str) -> None:
        if isinstance(node, ast.Import):
            found.extend((a.name, kind) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = mod.split(".") if is_pkg else mod.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            found.append((base, kind))
            found.extend((f"{base}.{a.name}", kind) for a in node.names)
        visit(node, kind)

    visit(tree, "module")
    return [(name, kind) for name, kind in found if name == PACKAGE or name.startswith(PACKAGE + ".")]


def entry_of(module: str) -> str | None:
    """The top-level entry of a module of the package (``pytest_jeval.suite.plan`` -> ``suite``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def existing(root: Path, module: str) -> str:
    """``module`` cut back to something that exists (``from x import name`` names an attribute)."""
    parts = module.split(".")
    while len(parts) > 1:
        rel = Path(*parts[1:])
        if (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    return PACKAGE


def layers_from_importlinter(path: Path) -> dict[str, int]:
    """Entry -> layer number (higher imports lower) from the first ``layers`` contract of an .importlinter."""
    parser = configparser.ConfigParser()
    parser.read(path)
    for section in parser.sections():
        if parser.get(section, "type", fallback="") == "layers":
            rows = [r.strip() for r in parser.get(section, "layers").splitlines() if r.strip()]
            table: dict[str, int] = {}
            for depth, row in enumerate(rows):
                for name in row.replace("|", " ").replace(":", " ").split():
                    table[name.strip("()").split(".")[-1]] = len(rows) - depth
            return table
    raise SystemExit(f"{path}: no layers contract")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=PACKAGE, help="the package directory (default: pytest_jeval)")
    ap.add_argument("--layers", help="a JSON file mapping top-level entries to layer numbers")
    ap.add_argument("--edges", action="store_true", help="list every edge between top-level entries")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    if args.layers:
        layers = {k: int(v) for k, v in json.loads(Path(args.layers).read_text()).items()}
    else:
        layers = layers_from_importlinter(root.parent / ".importlinter")
    entries = sorted({p.name if p.is_dir() else p.stem for p in root.iterdir()
                      if (p.is_dir() and (p / "__init__.py").is_file()) or (p.suffix == ".py")})
    edges: Counter[tuple[str, str]] = Counter()
    kinds: dict[tuple[str, str], set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if "data" in path.relative_to(root).parts:
            continue
        src = entry_of(module_name(path, root))
        for target, kind in imports_of(path, root):
            dst = entry_of(existing(root, target))
            if src is None or dst is None or src == dst:
                continue
            edges[(src, dst)] += 1
            kinds.setdefault((src, dst), set()).add(kind)
    upward = sorted(e for e in edges if e[0] in layers and e[1] in layers and layers[e[0]] < layers[e[1]])
    into_content = sorted(e for e in edges if e[0] not in CONTENT and e[1] in CONTENT)
    loose = [e for e in entries if (root / f"{e}.py").is_file()]
    print(f"top-level entries: {len(entries)} ({len(loose)} modules, {len(entries) - len(loose)} packages)")
    print(f"import edges between top-level entries: {len(edges)} ({sum(edges.values())} import statements)")
    print(f"edges running up a layer: {len(upward)}")
    for src, dst in upward:
        print(f"  {src} (layer {layers[src]}) -> {dst} (layer {layers[dst]}): {', '.join(sorted(kinds[(src, dst)]))}")
    print(f"edges from the framework into content ({', '.join(CONTENT)}): {len(into_content)}")
    for src, dst in into_content:
        print(f"  {src} -> {dst}: {edges[(src, dst)]} ({', '.join(sorted(kinds[(src, dst)]))})")
    if args.edges:
        for (src, dst), n in sorted(edges.items()):
            print(f"  {src} -> {dst}: {n} ({', '.join(sorted(kinds[(src, dst)]))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

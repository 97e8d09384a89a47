"""The package's import rules (src/qoslab/README.md, "Import rules"), checked on the source with
the ast module: a change that breaks one fails here, naming the file and line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "qoslab"

#: Modules whose job is pure computation: they may import only these qoslab modules and no
#: module that does I/O or starts processes.
PURE = {"netplan", "ios", "tccompile", "nftcompile", "switchconfig", "units"}
PURE_MAY_IMPORT = PURE | {"topology", "yamlio", "errors"}
IO_MODULES = {"subprocess", "socket", "asyncssh", "netmiko", "paramiko", "shutil", "sqlite3"}
#: (importer prefix, forbidden target prefix, why)
FORBIDDEN = [
    ("tccompile", "testbed", "the tc compiler is pure; the testbed applies plans"),
    ("nftcompile", "testbed", "the nftables compiler is pure; the virtual switch applies rulesets"),
    ("vswitch", "testbed", "the virtual switch owns the switch ports; it does not build testbeds"),
    ("ios", "testbed", "the IOS language is pure"),
    ("netplan", "testbed", "netplan is the layer below the testbed"),
    ("profiles", "testbed", "profiles render IOS text"),
    ("switchconfig", "testbed", "config diffs are pure"),
    ("switch", "vswitch", "pushing to a switch must not depend on the virtual switch's server"),
    ("switchconfig", "vswitch", "config diffs are pure"),
]


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module: str, node: ast.ImportFrom) -> str | None:
    """The qoslab-relative module an ImportFrom names ('' = the package), or None if external."""
    if node.level == 0:
        mod = node.module or ""
        if mod == "qoslab" or mod.startswith("qoslab."):
            return mod.removeprefix("qoslab").lstrip(".")
        return None
    base = module.split(".") if module else []
    is_pkg = (SRC / module.replace(".", "/") / "__init__.py").exists() if module else True
    keep = len(base) - node.level + (1 if is_pkg else 0)
    parts = base[:keep] + ([node.module] if node.module else [])
    return ".".join(p for p in parts if p)


def _imports() -> list[tuple[Path, int, str, str, list[str]]]:
    """(file, line, importer, imported qoslab module or external name, names) for every import."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(module, node)
                names = [a.name for a in node.names]
                if target is None:
                    out.append((path, node.lineno, module, "!" + (node.module or ""), names))
                else:
                    out.append((path, node.lineno, module, target, names))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("qoslab."):
                        out.append((path, node.lineno, module, a.name.removeprefix("qoslab."), []))
                    else:
                        out.append((path, node.lineno, module, "!" + a.name, []))
    return out


IMPORTS = _imports()


def _top(name: str) -> str:
    return name.split(".")[0]


def test_the_checker_sees_the_package():
    assert len({i[2] for i in IMPORTS}) > 40
    assert any(t == "netplan" for _, _, m, t, _ in IMPORTS if m == "tccompile")


def test_no_private_name_is_imported_across_modules():
    bad = [f"{p.relative_to(SRC)}:{line}: imports {n} from {t or 'qoslab'}"
           for p, line, m, t, names in IMPORTS if not t.startswith("!")
           for n in names if n.startswith("_") and not n.startswith("__") and t != m]
    assert not bad, "\n".join(bad)


def test_no_private_attribute_of_another_module_is_used():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        modules = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level
                   for a in n.names}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                bad.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("importer, target, why", FORBIDDEN)
def test_forbidden_dependencies(importer, target, why):
    bad = [f"{p.relative_to(SRC)}:{line}: imports {t}" for p, line, m, t, _ in IMPORTS
           if _top(m) == importer and not t.startswith("!") and _top(t) == target]
    assert not bad, f"{importer} must not import {target} ({why}):\n" + "\n".join(bad)


def test_pure_modules_import_only_pure_things():
    bad = []
    for p, line, m, t, _ in IMPORTS:
        if _top(m) not in PURE:
            continue
        if t.startswith("!"):
            if _top(t[1:]) in IO_MODULES:
                bad.append(f"{p.relative_to(SRC)}:{line}: imports {t[1:]} (I/O)")
        elif t and _top(t) not in PURE_MAY_IMPORT:
            bad.append(f"{p.relative_to(SRC)}:{line}: imports qoslab.{t}")
    assert not bad, "\n".join(bad)


def test_module_and_function_sizes():
    """No module over 400 lines; no function over 60 lines unless a comment on its first line says why."""
    big_modules = [f"{p.relative_to(SRC)}: {n} lines" for p in SRC.rglob("*.py")
                   if (n := len(p.read_text().splitlines())) > 400]
    big_functions = []
    for path in SRC.rglob("*.py"):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 60 and "# long:" not in lines[node.lineno - 1]:
                    big_functions.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.name} {n} lines")
    assert not big_modules and not big_functions, "\n".join(big_modules + big_functions)

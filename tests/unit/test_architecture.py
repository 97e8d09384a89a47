"""The package's import rules (src/qoslab/README.md, "Import rules"), checked on the source with
the ast module: a change that breaks one fails here, naming the file and line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "qoslab"

#: Modules whose job is pure computation (a package name covers its submodules): they may import
#: only these qoslab modules and no module that does I/O or starts processes.
PURE = {"testbedplan", "ios", "units", "portnames", "vswitch.tccompile", "vswitch.nftcompile", "vswitch.ingresscompile",
        "vswitch.execparse",
        "vswitch.archive", "vswitch.facts", "vswitch.dialects.catalyst3750.show_sys",
        "vswitch.dialects.catalyst3750.show_mqc", "vswitch.dialects.catalyst3750.commands",
        "vswitch.dialects.ioscommon.render", "vswitch.dialects.ioscommon.show_l2",
        "vswitch.dialects.ioscommon.show_ports", "vswitch.dialects.ioscommon.commands",
        "vswitch.dialects.catalyst9300.counters",
        "switch.ownership", "switch.ownrecord", "profiles.render",
        "meters.fidelityjudge", "meters.fidelitymeasure", "meters.cpuloss",
        "stats.recovery", "stats.sequential", "stats.seqsim", "trials.factors", "trials.comparisons",
        "campaign.trialplan", "report.lib", "report.calls", "report.factors", "report.fidelity", "report.mechanisms",
        "report.seedmpj", "report.seeds", "report.seedgrid",
        "workloads.metrics", "report.context", "report.tables", "report.texts", "report.switchq", "report.scale",
        "platforms.base", "platforms.neutral", "platforms.render9300", "platforms.xeparse", "platforms.fedparse",
        "vswitch.dialects.catalyst9300.show_sys", "vswitch.dialects.catalyst9300.show_mqc",
        "vswitch.dialects.catalyst9300.show_fed", "vswitch.dialects.catalyst9300.commands", "scale", "eos",
        "vswitch.eapi", "platforms.arista_eos.mapping", "platforms.arista_eos.render", "platforms.arista_eos.counters", "laxtypes",
        "yamlcore"}
PURE_MAY_IMPORT = PURE | {"topology", "portnames", "yamlio", "errors", "profiles.model", "trials.playbook",
                          "trafficgen.definitions", "trafficgen.patterns", "trafficgen.patternmodel", "workloads.base",
                          "registry"}
IO_MODULES = {"subprocess", "socket", "asyncssh", "netmiko", "paramiko", "shutil", "sqlite3"}
#: The rules per package: (importer, forbidden target, targets allowed all the same, why).
#: A name covers the package and its submodules.
FORBIDDEN = [
    ("switch", "vswitch", (), "the client side of the switch must work against a real Catalyst: it never "
     "depends on the virtual switch's server"),
    ("switch", "testbed", (), "the testbed is above the client side (it writes private files with switch.device's "
     "helper); the names it shares, where the virtual switch keeps its identity, are in testbedplan, below both"),
    ("switch", "campaign", (), "campaigns use switches, not the other way round"),
    ("vswitch", "testbed", ("testbed.statedir",), "the virtual switch owns the switch ports; it does not build "
     "testbeds (it reads the private state folder; the testbed's names are in testbedplan)"),
    ("vswitch", "switch", ("switch.device",), "the server shares only the endpoint and credentials with the "
     "client side"),
    ("vswitch", "campaign", (), "the virtual switch knows nothing of campaigns"),
    ("ios", "vswitch", (), "the IOS language and QoS model are below the virtual switch"),
    ("ios", "platforms", (), "the IOS language is below the platform drivers"),
    ("platforms", "vswitch", (), "a platform driver serves real switches; the virtual one emulates its dialect"),
    ("platforms", "testbed", (), "platforms render and parse text for any switch"),
    ("platforms", "campaign", (), "campaigns use platforms"),
    ("platforms", "switch", (), "the client side drives a platform; a platform renders and parses text for it"),
    ("vswitch", "platforms", (), "the virtual switch speaks a dialect (qoslab.ios), it does not drive itself"),
    ("vswitch.dialects", "vswitch.server", (), "a dialect answers lines; the SSH transport is the core's"),
    ("vswitch.dialects", "vswitch.session", (), "a dialect sees the session only through the Dialect "
     "interface (the session is handed to it)"),
    ("vswitch.dialects", "vswitch.core", (), "a dialect reads the switch through the object it is given, "
     "not the core's class"),
    ("ios", "switch", (), "the IOS language is below the switch"),
    ("eos", "vswitch", (), "the EOS language is below the virtual switch"),
    ("eos", "platforms", (), "the EOS language is below the platform drivers"),
    ("eos", "switch", (), "the EOS language is below the switch"),
    ("testbed", "vswitch", (), "the testbed starts the virtual switch as a process, it does not import it"),
    ("testbed", "campaign", (), "campaigns use testbeds"),
    ("testbed", "switch", ("switch.device",), "the testbed writes private files with switch.device's helper only"),
    ("profiles", "testbed", (), "profiles render IOS text"),
    ("profiles", "vswitch", (), "profiles render IOS text for any switch"),
    ("profiles", "platforms", (), "a platform renders a profile; the profile does not know the platforms"),
    ("profiles", "switch", (), "profiles render text; the push sends it"),
    ("executors", "campaign", (), "executors run commands; campaigns use them"),
    ("executors", "testbed", (), "the testbed runs executors; the names they share (where ip netns keeps "
     "namespaces) are in testbedplan, below both"),
    ("trafficgen", "campaign", (), "generators run floods; campaigns use them"),
    ("campaign", "vswitch", (), "a campaign talks to the switch through qoslab.switch's SwitchDevice, real or "
     "virtual alike"),
    ("campaign", "cli", (), "the CLI is the top layer"),
    ("workloads", "campaign", (), "workloads run programs on nodes; campaigns use them"),
    ("workloads", "cli", (), "the CLI is the top layer"),
    ("workloads", "meters", (), "meters observe workloads, not the other way round"),
    ("workloads", "stats", (), "workloads produce results; statistics come after the campaign"),
    ("workloads", "report", (), "the report reads results"),
    ("meters", "campaign", (), "a meter sees one trial through its TrialContext; campaigns run meters"),
    ("meters", "stats", (), "meters measure one trial; statistics come after the campaign"),
    ("meters", "report", (), "the report reads what meters stored"),
    ("meters", "cli", (), "the CLI is the top layer"),
    ("stats", "campaign", (), "statistics read the playbook and the store (qoslab.trials); they never import "
     "the runner"),
    ("campaign", "stats", (), "the runner asks the statistics for a sequential campaign's stopping check "
     "through the interface it owns (runner.StopCheck), handed in by its caller"),
    ("campaign", "report", (), "the report comes after the campaign"),
    ("trials", "campaign", (), "the playbook model and the trial store are below the runner"),
    ("trials", "stats", (), "the playbook model and the trial store are below the statistics"),
    ("trials", "report", (), "the report reads trials"),
    ("trials", "cli", (), "the CLI is the top layer"),
    ("trials", "testbed", (), "a playbook and a store are read anywhere, without a testbed"),
    ("trials", "executors", (), "a playbook and a store never run commands"),
    ("trials", "switch", (), "a playbook and a store never talk to a switch"),
    ("trials", "trafficgen", (), "a playbook names floods; it never starts one"),
    ("stats", "meters", ("meters.fidelityjudge", "meters.calls"), "statistics read what meters stored (the "
     "fidelity judge's thresholds and counts, the calls file's reader), never a live meter"),
    ("stats", "report", (), "the report presents statistics"),
    ("stats", "cli", (), "the CLI is the top layer"),
    ("stats", "testbed", (), "statistics run anywhere, without a testbed"),
    ("stats", "switch", (), "statistics never talk to a switch"),
    ("stats", "executors", (), "statistics never run commands on nodes"),
    ("stats", "trafficgen", (), "statistics never start floods"),
    ("report", "campaign", ("campaign.folder",), "the report reads a campaign folder (its playbook and store: "
     "qoslab.trials); it never runs trials"),
    ("report", "meters", ("meters.fidelityjudge",), "the report reads stored measurements"),
    ("report", "testbed", (), "the report runs anywhere"),
    ("report", "switch", (), "the report never talks to a switch"),
    ("report", "executors", (), "the report never runs commands on nodes"),
    ("report", "trafficgen", (), "the report never starts floods"),
    ("report", "cli", (), "the CLI is the top layer"),
    ("capture", "campaign", (), "the capture tool runs inside trials; campaigns use it"),
    ("capture", "meters", (), "meters read the capture's files"),
    ("capture", "stats", (), "statistics come after the campaign"),
    ("preflight", "testbed", ("testbed.procs",), "pre-flight checks a cluster through executors, not a testbed "
     "(it reads process facts only; the testbed's names are in testbedplan)"),
    ("preflight", "stats", (), "pre-flight runs before any trial"),
    ("preflight", "report", (), "pre-flight runs before any trial"),
    ("inventory", "campaign", (), "the Ansible inventory comes from a topology and a flood, not a campaign"),
]
#: The base modules: every package may import them; they import only each other (and the flood
#: definitions and scale knobs that describe a cluster).
BASE = {"errors", "units", "yamlio", "laxtypes", "yamlcore", "topology", "portnames", "registry", "clusterconf",
        "testbedplan"}
BASE_MAY_IMPORT = BASE | {"trafficgen.definitions", "trafficgen.patterns", "trafficgen.patternmodel",
                          "scale.knobs", "scale.cpu"}
#: Deprecated aliases kept for one release: they only re-export (campaign/meters.py -> qoslab.meters).
ALIASES = {"campaign.meters": "meters.base"}
#: The only modules that speak SQL (trials/store.py owns trials.sqlite; storeschema.py its schema).
SQL_OWNERS = ("trials.store", "trials.storeschema")


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
    assert any(t == "testbedplan" for _, _, m, t, _ in IMPORTS if m == "vswitch.tccompile")


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


def _under(name: str, prefix: str) -> bool:
    """Whether module ``name`` is ``prefix`` or inside it."""
    return name == prefix or name.startswith(prefix + ".")


def _target_module(t: str, names: list[str]) -> list[str]:
    """The modules an import names: ``from .ios import configdiff`` names ``ios.configdiff``."""
    found = [f"{t}.{n}" if t else n for n in names if (SRC / (f"{t}.{n}" if t else n).replace(".", "/")).with_suffix(
        ".py").exists()]
    return found or [t]


@pytest.mark.parametrize("importer, target, allowed, why", FORBIDDEN)
def test_forbidden_dependencies(importer, target, allowed, why):
    bad = [f"{p.relative_to(SRC)}:{line}: imports {tm}" for p, line, m, t, names in IMPORTS
           if _under(m, importer) and not t.startswith("!")
           for tm in _target_module(t, names)
           if _under(tm, target) and not any(_under(tm, a) for a in allowed)]
    assert not bad, f"{importer} must not import {target} ({why}):\n" + "\n".join(bad)


#: The dialect-neutral core of the virtual switch may name the dialects only through their interface.
DIALECT_INTERFACE = ("vswitch.dialects", "vswitch.dialects.base")


def _core_reaching_dialects(imports: list[tuple[Path, int, str, str, list[str]]]) -> list[str]:
    """Imports by which a vswitch module outside vswitch/dialects/ reaches a dialect package."""
    return [f"{p.relative_to(SRC)}:{line}: imports {tm}" for p, line, m, t, names in imports
            if _under(m, "vswitch") and not _under(m, "vswitch.dialects") and not t.startswith("!")
            for tm in _target_module(t, names)
            if _under(tm, "vswitch.dialects") and tm not in DIALECT_INTERFACE]


def test_the_virtual_switch_core_is_dialect_neutral():
    """No module of vswitch outside vswitch/dialects/ imports a dialect package: the core
    (server, session, core, counters, compilers) reaches a platform's CLI through the Dialect
    interface and the registry (docs/DESIGN.md, "Import rules"); the checker finds a crossing."""
    assert not _core_reaching_dialects(IMPORTS), "\n".join(_core_reaching_dialects(IMPORTS))
    fake = SRC / "vswitch" / "session.py"
    assert len(_core_reaching_dialects([(fake, 3, "vswitch.session", "vswitch.dialects.catalyst3750.show",
                                         ["show_3750"])])) == 1


def _cross_dialect(imports: list[tuple[Path, int, str, str, list[str]]]) -> list[str]:
    """The imports by which a dialect package (vswitch/dialects/NAME/) reaches another one
    (``ioscommon``, the interface and the package itself are shared)."""
    bad = []
    for p, line, m, t, names in imports:
        parts = m.split(".")
        if not _under(m, "vswitch.dialects") or len(parts) < 3 or t.startswith("!"):
            continue
        own = ".".join(parts[:3])
        for tm in _target_module(t, names):
            if _under(tm, "vswitch.dialects") and not _under(tm, own) and \
                    tm not in DIALECT_INTERFACE and not _under(tm, "vswitch.dialects.ioscommon"):
                bad.append(f"{p.relative_to(SRC)}:{line}: imports {tm}")
    return bad


def test_a_dialect_package_imports_no_other_dialect():
    """Each platform's CLI lives with it: a dialect package imports no other dialect package;
    what the Catalyst dialects share is ``ioscommon`` (and the checker does find a crossing)."""
    assert not _cross_dialect(IMPORTS), "\n".join(_cross_dialect(IMPORTS))
    fake = SRC / "vswitch" / "dialects" / "catalyst9300" / "show.py"
    assert _cross_dialect([(fake, 1, "vswitch.dialects.catalyst9300.show", "vswitch.dialects.catalyst3750.show",
                            ["mqc_family"])]) == ["vswitch/dialects/catalyst9300/show.py:1: imports "
                                                  "vswitch.dialects.catalyst3750.show"]


def test_the_rules_cover_every_package():
    """Every package of qoslab is named by at least one rule (a new package gets its rules)."""
    packages = {p.parent.relative_to(SRC).parts[0] for p in SRC.glob("*/__init__.py")}
    assert {"meters", "stats", "report", "workloads", "campaign"} <= packages
    ruled = {_top(i) for i, _, _, _ in FORBIDDEN} | {_top(t) for _, t, _, _ in FORBIDDEN} | {_top(p) for p in PURE}
    assert packages - {"cli"} <= ruled, f"packages without rules: {sorted(packages - {'cli'} - ruled)}"


def test_no_top_level_switch_modules():
    assert not sorted(SRC.glob("switch*.py")), "the switch lives in qoslab/switch/ (client) and qoslab/vswitch/"


def test_one_package_per_concern():
    """Measuring lives in meters/, statistics in stats/, the report in report/, the workloads and
    their process pool in workloads/ (issue 31): no top-level report*.py or workload.py, no meter or
    statistics module in campaign/ (the deprecated alias only re-exports)."""
    assert not sorted(SRC.glob("report*.py")) and not (SRC / "workload.py").exists()
    for pkg in ("meters", "stats", "report"):
        assert (SRC / pkg / "__init__.py").exists(), pkg
    campaign = {p.stem for p in (SRC / "campaign").glob("*.py")}
    measuring = {"cpu", "evidence", "drops", "callmeter", "fidelity", "fidelitycheck", "fidelitystats", "stats",
                 "callstats", "factorial", "censoring", "sequential", "stopping", "seqsim"}
    assert not campaign & measuring, sorted(campaign & measuring)


def test_aliases_only_re_export():
    """A deprecated alias defines nothing of its own: imports, ``__all__`` and the warning."""
    for alias, target in ALIASES.items():
        tree = ast.parse((SRC / (alias.replace(".", "/") + ".py")).read_text())
        own = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)]
        assert not own, f"{alias} defines {[n.name for n in own]}"
        targets = {_resolve(alias, n) for n in tree.body if isinstance(n, ast.ImportFrom) and n.level}
        assert target in targets, (alias, targets)


def test_base_modules_import_only_base_modules():
    bad = [f"{p.relative_to(SRC)}:{line}: imports qoslab.{tm}" for p, line, m, t, names in IMPORTS
           if m in BASE and not t.startswith("!") for tm in _target_module(t, names)
           if not any(_under(tm, ok) for ok in BASE_MAY_IMPORT)]
    assert not bad, "\n".join(bad)


def test_every_top_level_module_has_rules():
    """Every top-level module (not a package) is a base module or is named by a rule."""
    tops = {p.stem for p in SRC.glob("*.py")} - {"__init__", "__main__"}
    ruled = BASE | {_top(i) for i, _, _, _ in FORBIDDEN}
    assert tops <= ruled, f"top-level modules without rules: {sorted(tops - ruled)}"


_SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|CREATE\s+TABLE|ALTER\s+TABLE|"
                  r"DELETE\s+FROM|PRAGMA\s)", re.I | re.S)


def _sql_sites(path: Path) -> list[str]:
    """Lines of ``path`` that import sqlite3 or hold an SQL statement in a string."""
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(_top(m) == "sqlite3" for m in mods):
                out.append(f"{path}:{node.lineno}: imports sqlite3")
        elif isinstance(node, ast.JoinedStr):  # an f-string: its literal parts joined
            text = "{}".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if _SQL.search(text):
                out.append(f"{path}:{node.lineno}: SQL {text[:40]!r}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL.search(node.value):
            out.append(f"{path}:{node.lineno}: SQL {node.value[:40]!r}")
    return out


def test_no_sql_outside_the_store():
    """trials/store.py and its schema (:data:`SQL_OWNERS`) are the only code that speaks SQL: the package, the
    report notebook's source and the benchmarks read trials.sqlite through it."""
    roots = [SRC, SRC.parents[1] / "analysis", SRC.parents[1] / "bench"]
    files = [p for r in roots for p in sorted(r.rglob("*.py")) if ".venv" not in p.parts]
    assert any(p.name == "store.py" for p in files)
    owners = {SRC / (m.replace(".", "/") + ".py") for m in SQL_OWNERS}
    bad = [s for p in files if p not in owners for s in _sql_sites(p)]
    assert not bad, "SQL outside trials/store.py and trials/storeschema.py:\n" + "\n".join(bad)


def test_the_sql_checker_finds_sql(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('import sqlite3\nq = "SELECT a FROM trials WHERE b=1"\nu = "update me"\n'
                 'c = "x"\nw = f"SELECT {c} FROM trials"\n')
    assert len(_sql_sites(f)) == 3


def test_pure_modules_import_only_pure_things():
    bad = []
    for p, line, m, t, names in IMPORTS:
        if not any(_under(m, pure) for pure in PURE):
            continue
        if t.startswith("!"):
            if _top(t[1:]) in IO_MODULES:
                bad.append(f"{p.relative_to(SRC)}:{line}: imports {t[1:]} (I/O)")
        elif t and not any(_under(tm, ok) for tm in _target_module(t, names) for ok in PURE_MAY_IMPORT):
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


def test_every_pure_module_and_the_store_are_type_checked_strictly():
    """pyproject.toml's strict mypy override names every PURE module (or its package) and the store."""
    import tomllib

    conf = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text())["tool"]["mypy"]["overrides"]
    strict = {m for o in conf if o.get("disallow_untyped_defs") for m in o["module"]}

    def covered(mod: str) -> bool:
        full = f"qoslab.{mod}"
        return full in strict or any(s.endswith(".*") and _under(full, s[:-2]) for s in strict)

    missing = sorted(m for m in PURE | set(SQL_OWNERS) if not covered(m))
    assert not missing, f"not under strict mypy: {missing}"


# -- import circles (issue 53) ---------------------------------------------------------------

#: Import circles: none is allowed (issue 53), between modules nor between top-level packages and
#: modules (importing each other through any of their modules). An import counts wherever it
#: stands: at module level, under ``if TYPE_CHECKING:`` (a circle in the types is one in the
#: design) or inside a function (an import deferred to run time still ties the two modules).
MODULES = {_module_name(p) for p in SRC.rglob("*.py")}


def _imported_modules(module: str, tree: ast.AST) -> set[str]:
    """The qoslab modules that ``module`` (parsed as ``tree``) imports anywhere: module level,
    ``if TYPE_CHECKING:``, inside functions and classes. A name imported from a package that is
    a submodule counts as that submodule; the package itself otherwise."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if target is None:
                continue
            subs = [f"{target}.{a.name}" if target else a.name for a in node.names]
            found.update(s if s in MODULES else target for s in subs)
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("qoslab.") for a in node.names if a.name.startswith("qoslab."))
    return {t for t in found if t in MODULES and t != module}


def _module_graph() -> dict[str, set[str]]:
    """importer -> the qoslab modules it imports (:func:`_imported_modules`)."""
    return {_module_name(p): _imported_modules(_module_name(p), ast.parse(p.read_text(), str(p)))
            for p in sorted(SRC.rglob("*.py"))}


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` with more than one node (Tarjan), each a
    set of nodes: every import circle, however long."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m, targets in graph.items():
        out.setdefault(_top(m), set()).update(_top(t) for t in targets if _top(t) != _top(m))
    return out


MODULE_GRAPH = _module_graph()


def _explain(comp: set[str], graph: dict[str, set[str]]) -> str:
    return "; ".join(f"{a} -> {b}" for a in sorted(comp) for b in sorted(graph.get(a, set()) & comp))


def test_no_module_import_circle():
    found = [f"{', '.join(sorted(c))} ({_explain(c, MODULE_GRAPH)})" for c in circles(MODULE_GRAPH)]
    assert not found, "import circle(s) between modules: " + " | ".join(found)


def test_no_package_import_circle():
    pkgs = _package_graph(MODULE_GRAPH)
    found = [f"{', '.join(sorted(c))} ({_explain(c, pkgs)})" for c in circles(pkgs)]
    assert not found, "import circle(s) between packages: " + " | ".join(found)


#: The knot cut last (issue 53): one import back down re-ties two of its five packages.
KNOT_EDGES = [("executors.sshio", "testbed.statedir"), ("switch.backends", "testbed.core"),
              ("platforms.catalyst3750", "switch.push"), ("profiles.render", "platforms.base")]


@pytest.mark.parametrize("importer, target", KNOT_EDGES)
def test_an_import_back_down_the_layers_is_a_package_circle(importer, target):
    """executors < testbed, platforms < switch < testbed, profiles < platforms: the five packages
    once tied in one circle form layers since testbedplan, ios.configdiff and platforms.counters
    moved below them; an import from a lower one back up makes a package circle again."""
    assert importer in MODULE_GRAPH and target in MODULE_GRAPH
    graph = {m: set(t) for m, t in MODULE_GRAPH.items()}
    graph[importer].add(target)
    assert any({_top(importer), _top(target)} <= c for c in circles(_package_graph(graph)))


def test_the_circle_check_sees_a_circle():
    # the real graph plus one import back (units is a base module that topology imports)
    assert "units" in MODULE_GRAPH["topology"]
    graph = {m: set(t) for m, t in MODULE_GRAPH.items()}
    graph["units"].add("topology")
    assert {"units", "topology"} <= next(c for c in circles(graph) if "units" in c)
    assert {"a", "b", "c"} in circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert circles({"a": {"b"}, "b": set()}) == []
    assert {"stats", "campaign"} in circles(_package_graph({"stats.x": {"campaign.y"}, "campaign.y": {"stats.z"},
                                                            "stats.z": set()}))


def test_an_import_inside_a_function_or_under_type_checking_counts():
    """A deferred import ties two modules as much as one at the top: the old stats <-> campaign
    circle was cut only by ``from qoslab.stats.campaign import plan_comparisons`` inside a
    function, and the check now sees such a cut (and one under ``if TYPE_CHECKING:``)."""
    src = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from qoslab.trials.store import Store\n"
           "def f():\n    from qoslab.campaign import runner\n    from ..trials import playbook\n"
           "class C:\n    def g(self):\n        import qoslab.units\n")
    assert _imported_modules("stats.x", ast.parse(src)) == {"trials.store", "campaign.runner", "trials.playbook",
                                                             "units"}
    graph = {m: set(t) for m, t in MODULE_GRAPH.items()}
    graph["trials.store"] |= _imported_modules("trials.store", ast.parse("def f():\n    from ..campaign import runner\n"))
    assert any({"trials.store", "campaign.runner"} <= c for c in circles(graph))

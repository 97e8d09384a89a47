"""Size rules over the Java modules and the report notebook's source (issue 31), the same limits
tests/unit/test_architecture.py sets for the Python package: no source file over 400 lines, no
method (or constructor) over 60 lines unless a ``// long:`` comment on its first line says why.

The Java source is read with a small lexer (no new dependency): string, character and text-block
literals and comments are skipped, braces are counted, and a block is a method when it opens
directly in a class body after a header of the form ``... name(...) [throws ...]``. A violation
names the file and line."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 400
MAX_METHOD_LINES = 60
NOTEBOOK = ROOT / "analysis" / "notebooks" / "report.py"

#: Words that open a block with parentheses but are not declarations.
_CONTROL = {"if", "for", "while", "switch", "catch", "synchronized", "try", "else", "do", "return", "throw",
            "finally", "case", "default", "assert", "yield"}
_TYPE_WORDS = re.compile(r"\b(class|interface|enum|record)\b")
_ANNOTATION = re.compile(r"@[\w.]+(\s*\((?:[^()]|\([^()]*\))*\))?")
_METHOD_HEADER = re.compile(r"(\w+)\s*\(")
_LONG_WHY = re.compile(r"//\s*long:\s*\S")


def java_modules() -> list[Path]:
    """The reactor's modules, from the root pom.xml's <module> lines."""
    pom = (ROOT / "pom.xml").read_text(encoding="utf-8")
    return [ROOT / m for m in re.findall(r"<module>([^<]+)</module>", pom)]


def java_sources() -> list[Path]:
    return sorted(p for m in java_modules() for p in (m / "src").rglob("*.java"))


@dataclass
class Method:
    name: str
    line: int  # 1-based line of the declaration's name
    end: int  # 1-based line of the closing brace
    says_why: bool

    @property
    def lines(self) -> int:
        return self.end - self.line + 1


def _lex(src: str) -> tuple[list[tuple[str, int, str]], set[int]]:
    """Code tokens of interest as (kind, line, text): kind '{', '}', ';' or 'text' (the code between
    them, literals replaced by a placeholder); plus the lines that carry a ``// long:`` comment."""
    tokens: list[tuple[str, int, str]] = []
    long_lines: set[int] = set()
    buf: list[str] = []
    line, i, n = 1, 0, len(src)
    start = 1  # line where the text in buf begins

    def flush() -> None:
        if buf:
            tokens.append(("text", start, "".join(buf)))
            buf.clear()

    while i < n:
        ch = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            if _LONG_WHY.match(src[i:j]):
                long_lines.add(line)
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            i = j
        elif src.startswith('"""', i):  # text block
            j = src.find('"""', i + 3)
            while j > 0 and src[j - 1] == "\\" and src[j - 2] != "\\":
                j = src.find('"""', j + 1)
            j = n if j < 0 else j + 3
            if not buf:
                start = line
            line += src.count("\n", i, j)
            buf.append('""')
            i = j
        elif ch in "\"'":
            j = i + 1
            while j < n and src[j] != ch and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            if not buf:
                start = line
            buf.append('""')
            i = j + 1
        elif ch in "{};":
            flush()
            tokens.append((ch, line, ch))
            i += 1
        else:
            if not buf:
                start = line
            if ch == "\n":
                line += 1
            buf.append(ch)
            i += 1
    flush()
    return tokens, long_lines


def _header_kind(header: str) -> tuple[str, str | None]:
    """What a block opened after this header is: ('class', None), ('method', name) or ('other', None)."""
    h = _ANNOTATION.sub(" ", header).strip()
    if _TYPE_WORDS.search(h) or re.search(r"\bnew\b[^=]*\)\s*$", h):
        return "class", None  # type declaration or anonymous class
    if "->" in h or "=" in h.split("(")[0]:
        return "other", None
    m = _METHOD_HEADER.search(h)
    if m is None or m.group(1) in _CONTROL or not re.search(r"\)\s*(throws\s+[\w.,\s<>]+)?$", h):
        return "other", None
    return "method", m.group(1)


def methods_of(src: str) -> list[Method]:
    """Every method and constructor declared with a body in a Java source (nested classes included)."""
    tokens, long_lines = _lex(src)
    out: list[Method] = []
    stack: list[tuple[str, Method | None]] = [("class", None)]  # the compilation unit holds types
    header: list[tuple[int, str]] = []
    for kind, line, text in tokens:
        if kind == "text":
            header.append((line, text))
            continue
        if kind == "{":
            joined = "".join(t for _, t in header)
            what, name = _header_kind(joined) if stack[-1][0] == "class" else ("other", None)
            if what == "method" and name is not None:
                first_line = _first_code_line(header, name, line)
                why = first_line in long_lines or line in long_lines
                stack.append(("method", Method(name, first_line, line, why)))
            else:
                inner = what if stack[-1][0] == "class" else _header_kind(joined)[0]
                stack.append(("class" if inner == "class" else "other", None))
        elif kind == "}":
            if len(stack) > 1:
                _, method = stack.pop()
                if method is not None:
                    method.end = line
                    out.append(method)
        header = []
    return out


def _first_code_line(header: list[tuple[int, str]], name: str, brace_line: int) -> int:
    """The line of the declaration's name (annotations and Javadoc above it do not count)."""
    pattern = re.compile(r"\b" + re.escape(name) + r"\s*\(")
    for start, text in header:
        for k, part in enumerate(text.split("\n")):
            if pattern.search(_ANNOTATION.sub(" ", part)):
                return start + k
    return brace_line


def long_files() -> list[str]:
    out = []
    for p in java_sources():
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_FILE_LINES:
            out.append(f"{p.relative_to(ROOT)}:1: {n} lines (at most {MAX_FILE_LINES})")
    return out


def long_methods() -> list[str]:
    out = []
    for p in java_sources():
        for m in methods_of(p.read_text(encoding="utf-8")):
            if m.lines > MAX_METHOD_LINES and not m.says_why:
                out.append(f"{p.relative_to(ROOT)}:{m.line}: {m.name}() is {m.lines} lines "
                           f"(at most {MAX_METHOD_LINES} without a '// long: why' on its first line)")
    return out


def test_the_checker_sees_the_java_modules():
    names = {m.name for m in java_modules()}
    assert {"java-common", "java-workload", "capture", "analysis"} <= names
    sources = java_sources()
    assert any(p.name == "CallMatcher.java" for p in sources)
    assert any(p.name == "Classifier.java" for p in sources)


def test_no_java_source_over_400_lines():
    assert long_files() == []


def test_no_java_method_over_60_lines():
    assert long_methods() == []


def test_the_method_reader_finds_methods_and_skips_what_is_not_one():
    src = textwrap.dedent('''\
        package x;
        /** a { brace in a comment */
        public final class A {
            static final String S = "}{ not code";
            static final char C = '{';
            static final String T = """
                text block with { and }
                """;
            @Override
            public String toString() { return "}"; }
            A(int n) throws java.io.IOException {
                if (n > 0) { n--; }
                Runnable r = () -> { System.out.println("{"); };
                Object o = new Object() {
                    @Override public int hashCode() { return 1; }
                };
            }
            static { int k = 0; }
            record R(int a) { R { } int twice() { return 2 * a; } }
            enum E { ONE, TWO; int k() { return 0; } }
            interface I { void m(); default int d() { return 0; } }
            void longOne() { // long: a reason
            }
        }
        ''')
    found = {(m.name, m.line, m.end, m.says_why) for m in methods_of(src)}
    assert found == {
        ("toString", 10, 10, False),
        ("A", 11, 17, False),
        ("hashCode", 15, 15, False),
        ("twice", 19, 19, False),
        ("k", 20, 20, False),
        ("d", 21, 21, False),
        ("longOne", 22, 23, True),
    }


def test_a_long_method_is_found_and_named_with_its_line(tmp_path):
    body = "\n".join(f"        int v{k} = {k};" for k in range(70))
    src = f"class B {{\n    /** doc */\n    void big() {{\n{body}\n    }}\n\n    void why() {{ // long: one table\n{body}\n    }}\n}}\n"
    methods = {m.name: m for m in methods_of(src)}
    assert methods["big"].line == 3 and methods["big"].lines == 72 and not methods["big"].says_why
    assert methods["why"].says_why


def test_the_report_notebook_source_is_under_400_lines():
    n = len(NOTEBOOK.read_text(encoding="utf-8").splitlines())
    assert n < MAX_FILE_LINES, f"{NOTEBOOK.relative_to(ROOT)}:1: {n} lines (under {MAX_FILE_LINES})"

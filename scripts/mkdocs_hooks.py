"""MkDocs hook (mkdocs.yml ``hooks:``): links from a page to a repository file outside ``docs/``
(``../playbooks/README.md#fields``, as the pages read on a forge) become the file's path in code
(``playbooks/README.md``), since the site holds only ``docs/``. A link to a file that exists
nowhere is left alone, so ``mkdocs build --strict`` still fails on it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    here = (docs / page.file.src_path).parent

    def outside(m: re.Match[str]) -> str:
        text, target = m.group(1), m.group(2)
        if re.match(r"^([a-z]+:|#|/)", target):
            return m.group(0)
        path = (here / target.split("#", 1)[0]).resolve()
        if path.is_relative_to(docs) or not path.is_relative_to(root) or not path.exists():
            return m.group(0)
        rel = path.relative_to(root).as_posix() + ("/" if path.is_dir() else "")
        return text if text.strip("`") == rel else f"{text} (`{rel}`)"

    return _LINK.sub(outside, markdown)

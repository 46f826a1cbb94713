"""The configuration tables of README.md and docs/configuration.md, generated from the `Context`
fields (deepresearch/config.py: each field's default and description) and the CLI's options.

    python docs/context_table.py           rewrite the tables between their markers
    python docs/context_table.py --check   exit 1 when a table is not what the fields give

A table sits between `<!-- context-table: NAME -->` and `<!-- /context-table -->`; NAME is
`all` (every field) or `common` (the fields most runs set). `make docs` rewrites them;
tests/test_docs.py fails when one is stale.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import MISSING, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = (ROOT / "README.md", ROOT / "docs" / "configuration.md")
COMMON = (
    "model",
    "base_url",
    "search",
    "mode",
    "max_iterations",
    "max_tokens",
    "max_seconds",
    "max_cost",
    "max_sections",
    "outline_style",
    "outline_review",
    "clarify",
    "language",
    "style",
    "citation_style",
    "charts",
    "edit_after_report",
)
# context fields whose CLI option has another name (None: no option); the others are `--field-name`
CLI_NAMES = {
    "search_base_url": None,
    "max_sections": "sections",
    "section_concurrency": "concurrency",
    "outline_style": "outline",
    "outline_review": "review",
    "mcp_servers": "mcp",
    "search_base_urls": "search_base_url",
    "infer": "no_infer",
}
BLOCK = re.compile(r"(<!-- context-table: (\w+) -->\n)(.*?)(<!-- /context-table -->)", re.S)


def cli_options() -> dict[str, str]:
    """The run command's options by their argparse dest, e.g. {'max_tokens': '--max-tokens'}."""
    from deepresearch.cli.run import run_parser

    return {a.dest: max(a.option_strings, key=len) for a in run_parser()._actions if a.option_strings}


def cell(text: str) -> str:
    """Plain text for a Markdown table cell: no pipe, tag or emphasis read from it."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*")


def code(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"


def table(names: tuple[str, ...] | None = None) -> str:
    from deepresearch.config import Context

    options = cli_options()
    by_name = {f.name: f for f in fields(Context)}
    rows = ["| field | default | CLI | what it sets |", "|---|---|---|---|"]
    for name in names or tuple(by_name):
        f = by_name[name]
        default = None if f.default is MISSING else f.default
        cli = CLI_NAMES.get(name, name)
        option = options.get(cli) if cli else None
        rows.append(
            f"| {code(name)} | {code(json.dumps(default))} | {code(option) if option else '-'} "
            f"| {cell(f.metadata['description'])} |"
        )
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + table(None if m.group(2) == "all" else COMMON) + m.group(4), text)


def main(argv: list[str]) -> int:
    stale = []
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if "--check" not in argv:
                path.write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"stale configuration tables in {', '.join(map(str, stale))}: run make docs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

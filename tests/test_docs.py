"""The README and the pages under docs/ stay short, linked and true to the code: a
README a newcomer reads in minutes, links that lead somewhere, a tools table that
names every published tool where it belongs, each rule placed, each benchmark's
figures kept."""

from __future__ import annotations

import re
from pathlib import Path

from django.urls import reverse

from tools.specs import PUBLISHED

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {
        re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        for heading in headings
    }


def table_rows(page: Path) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in page.read_text().splitlines()
        if line.startswith("| ")
    ]


def test_the_readme_is_short_and_has_the_two_commands():
    """At most 150 lines, and its commands are `make run` and `make test`, both
    targets of the Makefile."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    block = re.search(r"^## The two commands\n.*?```sh\n(.*?)```", readme, re.S | re.M)
    assert block
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    assert commands == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


def test_every_relative_link_leads_to_a_file_and_heading():
    """Each link to a file of the repository (and its #anchor) exists."""
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and anchor not in anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text()
    for page in DOCS.glob("*.md"):
        assert f"](docs/{page.name})" in readme, page.name


def test_the_tools_table_names_each_published_tool_by_kind_and_effect():
    """Each tool of the registry is in docs/harness.md's table, on its integration
    kind's row and in the reads or writes column its effect says."""
    rows = table_rows(DOCS / "harness.md")
    for tool in PUBLISHED:
        [row] = [row for row in rows if f"`{tool.name}(" in "".join(row)]
        kind, reads, writes = row
        assert kind.startswith(f"`{tool.integration}`" if tool.integration else "none")
        assert f"`{tool.name}(" in (reads if tool.effect == "read" else writes)


def test_each_rule_has_its_place_in_the_harness_page():
    rules = [row[0] for row in table_rows(DOCS / "harness.md")]
    for number in range(1, 13):
        assert any(rule.startswith(f"R{number} ") for rule in rules), number


def test_the_api_page_gives_the_openapi_document_where_the_app_serves_it():
    assert f"`{reverse('api-openapi')}`" in (DOCS / "api.md").read_text()


def test_each_benchmark_is_in_the_performance_page():
    """Every script of tests/bench/ that measures is named there, with how to run it."""
    performance = (DOCS / "performance.md").read_text()
    for script in sorted((ROOT / "tests" / "bench").glob("bench_*.py")):
        assert script.name in performance, script.name

"""The README and the pages under docs/ stay short, linked and true to the code: a
README a newcomer reads in minutes, links that lead somewhere, a tools table that
names every published tool where it belongs, each rule placed, each benchmark's
figures kept."""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from gymnasia.management.commands.serve import Command as ServeCommand
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
            if not linked.is_relative_to(ROOT):
                broken.append(f"{page.name}: {target} (outside the repository)")
            elif not linked.exists():
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


def test_no_page_points_outside_the_repository():
    """A clone has nothing beside the repository: no page names a path out of it
    (``../``) nor a design file it does not hold; the rules are in the docs."""
    for page in PAGES:
        text = page.read_text()
        assert "../" not in text, page.name
        assert "DESIGN.md" not in text and "shared/" not in text, page.name
    rules = (DOCS / "harness.md").read_text().split("## The rules")[1]
    for number in range(1, 13):
        assert f"- **R{number} " in rules, number


def _block_after(page: Path, heading: str) -> list[str]:
    """The lines of the first code block under ``heading``, continuations joined."""
    text = page.read_text().split(heading, 1)[1]
    block = re.search(r"```(?:sh)?\n(.*?)```", text, re.S)
    assert block, heading
    return block.group(1).replace("\\\n", " ").strip().splitlines()


def test_the_real_model_pages_demo_command_runs_as_written(tmp_path):
    """``OPENAI_API_KEY=sk-… DEBUG=1 .venv/bin/python manage.py seed_demo
    --provider openai``, in a shell with none of the app's variables set, makes
    the demo agent OpenAI's."""
    [line] = _block_after(DOCS / "real-model.md", "## The demo command by itself")
    key, debug, python, *arguments = shlex.split(line)
    assert (key, debug) == ("OPENAI_API_KEY=sk-…", "DEBUG=1")
    assert python == ".venv/bin/python" and arguments[:2] == ["manage.py", "seed_demo"]
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL"}
        and not key.endswith("_API_KEY")
    }
    env.update(GYMNASIA_DATA_DIR=str(tmp_path), DEBUG="1", OPENAI_API_KEY="sk-test")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)

    done = subprocess.run(
        [sys.executable, *arguments], cwd=ROOT, env=env, capture_output=True, text=True
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("owner: demo-owner ")
    with sqlite3.connect(tmp_path / "gymnasia.sqlite3") as database:
        assert database.execute("SELECT provider FROM agents_agent").fetchall() == [
            ("openai",)
        ]


def test_make_run_with_a_provider_seeds_the_demo_agent_with_it():
    """``make run PROVIDER=openai MODEL=gpt-5``, as the page says, passes both to
    ``seed_demo`` (``make -n`` prints what it would run)."""
    lines = _block_after(DOCS / "real-model.md", "## `make run` with a key")
    assert "OPENAI_API_KEY=sk-… make run PROVIDER=openai MODEL=gpt-5" in lines
    dry = subprocess.run(
        [
            "make",
            "-n",
            "-W",
            ".venv/.installed",
            "run",
            "PROVIDER=openai",
            "MODEL=gpt-5",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    joined = dry.replace("\\\n", " ").splitlines()
    [seed] = [line for line in joined if "seed_demo" in line]
    assert seed.split("seed_demo", 1)[1].split() == [
        "--site-origin",
        "http://localhost:8000",
        "--provider",
        "openai",
        "--model",
        "gpt-5",
    ]


@pytest.mark.django_db
def test_the_deployment_pages_first_gym_command_runs_as_written():
    from gymnasia.gyms.models import Business

    create, password = _block_after(DOCS / "deployment.md", "### The first gym")
    python, manage, command, *arguments = shlex.split(create)
    assert (python, manage, command) == ("python", "manage.py", "gym_create")
    out = StringIO()

    call_command(command, *arguments, stdout=out)

    assert Business.objects.get().name == "Gimnasio Sol"
    assert out.getvalue().splitlines()[-1].endswith(password)


def test_each_production_process_runs_a_real_command():
    """The process list an operator pastes: web, worker and beat, each a command
    this app has."""
    processes = dict(
        line.split(": ", 1)
        for line in _block_after(DOCS / "deployment.md", "### The processes")
    )
    assert set(processes) == {"web", "worker", "beat"}
    web = shlex.split(processes["web"])
    assert web[:3] == ["python", "manage.py", "serve"]
    options = ServeCommand().create_parser("manage.py", "serve").parse_args(web[3:])
    assert options.no_worker and options.workers == 4
    assert shlex.split(processes["worker"])[:4] == [
        "celery",
        "-A",
        "gymnasia",
        "worker",
    ]
    assert shlex.split(processes["beat"])[:4] == ["celery", "-A", "gymnasia", "beat"]

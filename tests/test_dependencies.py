"""DESIGN.md's dependency rule, read from the code's own imports: ``agents`` →
``tools`` → the gym's domain; ``approvals`` → ``tools`` (its services and models,
never the dispatcher's internals) and → ``agents`` (the one service that goes on
with a conversation, and the reads the inbox shows); ``tools`` imports neither."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The parts of ``tools`` that are the call's path itself, not its services.
TOOLS_INTERNALS = {"tools.execution", "tools.canonical"}
#: What the dispatcher offers ``approvals``: its public steps of a request (the
#: check of a correction, the run of an approved call), none of its insides.
DISPATCHER_SERVICES = {"correction_checked", "dispatch_approved"}


def _imports(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` (migrations aside) and the modules it imports,
    at any depth of its code (an import inside a function counts too)."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


def test_tools_imports_neither_approvals_nor_agents():
    offending = {
        module: sorted(n for n in names if n.split(".")[0] in {"approvals", "agents"})
        for module, names in _imports("tools").items()
    }
    assert {m: n for m, n in offending.items() if n} == {}


def _names_from(package: str, module: str) -> set[str]:
    """The names the modules of ``package`` import from ``module``."""
    names = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == module:
                names.update(alias.name for alias in node.names)
    return names


def test_approvals_uses_the_services_and_models_of_tools_not_its_internals():
    offending = {
        module: sorted(names & TOOLS_INTERNALS)
        for module, names in _imports("approvals").items()
    }
    assert {m: n for m, n in offending.items() if n} == {}
    assert _names_from("approvals", "tools.dispatcher") <= DISPATCHER_SERVICES
    used = set().union(*_imports("approvals").values())
    assert "tools.calls" in used  # the decisions go through the call's life


def test_agents_never_imports_approvals():
    offending = {
        module: sorted(n for n in names if n.split(".")[0] == "approvals")
        for module, names in _imports("agents").items()
    }
    assert {m: n for m, n in offending.items() if n} == {}


def test_nothing_is_registered_at_start_up():
    """No app's ``ready`` reaches into another of our apps to hand it a part of
    itself: a request is a state of its call, which ``tools`` owns (DESIGN.md,
    the dependency rule). Django's own system checks may be registered."""
    ours = {"agents", "tools", "approvals", "gymnasia"}
    for package in ours:
        for path in (ROOT / package).rglob("apps.py"):
            tree = ast.parse(path.read_text())
            for ready in ast.walk(tree):
                if not (isinstance(ready, ast.FunctionDef) and ready.name == "ready"):
                    continue
                reached = {
                    node.module.split(".")[0]
                    for node in ast.walk(ready)
                    if isinstance(node, ast.ImportFrom) and node.module
                }
                assert reached & ours <= {package}, (path, reached)

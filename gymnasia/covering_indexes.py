"""Covering indexes on PostgreSQL: a migration step that makes an index of the
models' state (plain, as every database takes it) hold more columns where the
database can, so a query reads them from the index alone."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def covering_index(
    app_label: str, model_name: str, plain: models.Index, include: list[str]
) -> migrations.RunPython:
    """The step that swaps ``plain`` for the same index with ``include`` on
    PostgreSQL (and back when unapplied); elsewhere it does nothing."""
    covering = models.Index(
        fields=plain.fields,
        condition=plain.condition,
        include=include,
        name=plain.name,
    )

    def swap(old: models.Index, new: models.Index) -> Any:
        def run(apps: Any, schema_editor: Any) -> None:
            if schema_editor.connection.vendor != "postgresql":
                return
            model = apps.get_model(app_label, model_name)
            schema_editor.remove_index(model, old)
            schema_editor.add_index(model, new)

        return run

    return migrations.RunPython(swap(plain, covering), swap(covering, plain))

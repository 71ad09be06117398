"""Spanish translations exist for every string and the compiled catalog is current."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.utils import translation

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "locale" / "es" / "LC_MESSAGES" / "django.po"


def test_spanish_catalog_has_every_entry_translated():
    catalog = polib.pofile(str(CATALOG))
    assert catalog.untranslated_entries() == []
    assert catalog.fuzzy_entries() == []
    assert catalog.obsolete_entries() == []


def _compiled(entry: polib.POEntry) -> list[str]:
    """What the compiled catalog gives for an entry: its text, or for a text
    with plural forms the text of one thing and of two."""
    if entry.msgid_plural:
        return [
            translation.ngettext(entry.msgid, entry.msgid_plural, n) for n in (1, 2)
        ]
    return [translation.gettext(entry.msgid)]


def _source(entry: polib.POEntry) -> list[str]:
    if entry.msgid_plural:
        return [entry.msgstr_plural.get(form, "") for form in (0, 1)]
    return [entry.msgstr]


def test_compiled_spanish_catalog_matches_the_source():
    catalog = polib.pofile(str(CATALOG))
    with translation.override("es"):
        stale = [e.msgid for e in catalog if _compiled(e) != _source(e)]
    assert stale == [], "run compilemessages"


def test_an_entry_with_plural_forms_has_each_form_translated():
    """Spanish has two forms, one thing and several: an entry with plural forms
    translates both, and the compiled catalog gives each."""
    catalog = polib.pofile(str(CATALOG))
    plural = [e for e in catalog if e.msgid_plural]
    assert plural, "the catalog has entries with plural forms"
    assert [e.msgid for e in plural if not all(_source(e))] == []


@pytest.mark.skipif(
    shutil.which("xgettext") is None, reason="needs GNU gettext's xgettext"
)
def test_every_marked_string_is_in_the_catalog(tmp_path):
    copy = tmp_path / "django.po"
    shutil.copy(CATALOG, copy)
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "makemessages",
            "-l",
            "es",
            "--ignore=.venv",
            "--ignore=var",
            "--ignore=tests",
            "--no-obsolete",
            "-v0",
        ],
        cwd=ROOT,
        env={"DEBUG": "1", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    try:
        assert result.returncode == 0, result.stderr
        fresh = polib.pofile(str(CATALOG))
        # makemessages guesses a new string's translation from a similar one and
        # marks it fuzzy: a guess is not a translation.
        missing = [e.msgid for e in fresh if not all(_source(e)) or "fuzzy" in e.flags]
        assert missing == [], "translate these in locale/es/LC_MESSAGES/django.po"
    finally:
        shutil.copy(copy, CATALOG)

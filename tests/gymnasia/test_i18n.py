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


def test_compiled_spanish_catalog_matches_the_source():
    catalog = polib.pofile(str(CATALOG))
    with translation.override("es"):
        stale = [e.msgid for e in catalog if translation.gettext(e.msgid) != e.msgstr]
    assert stale == [], "run compilemessages"


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
        missing = [e.msgid for e in fresh if not e.msgstr or "fuzzy" in e.flags]
        assert missing == [], "translate these in locale/es/LC_MESSAGES/django.po"
    finally:
        shutil.copy(copy, CATALOG)

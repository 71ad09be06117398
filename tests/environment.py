"""Loaded before Django: the test run uses the settings' development defaults.

Tests that need production settings start a subprocess with their own environment.
"""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("DEBUG", "1")

# The run's own folder for the embedded default's files, the broker's queue above
# all: a `make run` going on beside the tests must not take their tasks.
if "GYMNASIA_DATA_DIR" not in os.environ:
    _data_dir = tempfile.mkdtemp(prefix="gymnasia-tests-")
    atexit.register(shutil.rmtree, _data_dir, ignore_errors=True)
    os.environ["GYMNASIA_DATA_DIR"] = _data_dir

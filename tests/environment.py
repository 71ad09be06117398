"""Loaded before Django: the test run uses the settings' development defaults.

Tests that need production settings start a subprocess with their own environment.
"""

import os

os.environ.setdefault("DEBUG", "1")

from tests.tools.conftest import world  # noqa: F401  (the same small gym)

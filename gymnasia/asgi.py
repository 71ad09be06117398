"""ASGI entry point, served by uvicorn."""

import gc
import os

# Django's handler, but Meta's webhook runs no thread of its own (gymnasia.handlers).
from gymnasia.handlers import application_get

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gymnasia.settings")

application = application_get()

# A decision link's token must not reach the access log (gymnasia.logs).
from gymnasia.logs import access_log_tokens_hidden  # noqa: E402

access_log_tokens_hidden()

# The configured providers' SDKs load now, not in a member's first turn. Then what
# start-up loaded, which lives as long as the process, is frozen out of the garbage
# collector's full collections: each walked all of it, 80-120 ms with the event loop
# stopped, twice during the 200-turn benchmark.
from agents.assistant import adapters_preload  # noqa: E402

adapters_preload()
gc.collect()
gc.freeze()

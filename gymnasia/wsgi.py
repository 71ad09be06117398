"""WSGI entry point, for servers that do not speak ASGI."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gymnasia.settings")

application = get_wsgi_application()

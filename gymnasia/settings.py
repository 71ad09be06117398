"""Settings for Gymnasia, read from the environment.

Every variable is optional on the embedded default (DEBUG on, SQLite, a broker that
needs no server). With DEBUG off the secret key and the encryption keys must be given,
and the production settings pass ``manage.py check --deploy``.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("GYMNASIA_DATA_DIR", BASE_DIR / "var"))


def _flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _list(name: str) -> list[str]:
    return [
        item.strip() for item in os.environ.get(name, "").split(",") if item.strip()
    ]


DEBUG = _flag("DEBUG")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set it in the environment, or set DEBUG=1 for "
            "a development run."
        )
    SECRET_KEY = "django-insecure-gymnasia-development-key-never-use-in-production"  # noqa: S105

ALLOWED_HOSTS = _list("ALLOWED_HOSTS")
if DEBUG and not ALLOWED_HOSTS:
    ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]

#: The proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` ``manage.py
#: serve`` believes (comma-separated addresses or networks, ``*`` for any): none
#: outside ``DEBUG``, so a client on the host cannot claim another address and
#: start over the per-address limits; loopback under ``DEBUG``.
FORWARDED_ALLOW_IPS = _list("FORWARDED_ALLOW_IPS") or (["127.0.0.1"] if DEBUG else [])

#: The API addresses an owner may choose for a Stripe integration (the first is
#: the default). Gymnasia sends the gym's secret key to the one chosen, so it is
#: the operator's list, never an owner's: a local fake in tests, for example.
STRIPE_API_BASES = [base.rstrip("/") for base in _list("STRIPE_API_BASES")] or [
    "https://api.stripe.com"
]
#: The same for a Mindbody integration, each address with its version path: the
#: gym's API key and staff password go only to one of these.
MINDBODY_API_BASES = [base.rstrip("/") for base in _list("MINDBODY_API_BASES")] or [
    "https://api.mindbodyonline.com/public/v6"
]

#: The Graph API addresses an owner may choose for a WhatsApp channel (the first
#: is the default), without the version (``agents.whatsapp.graph`` adds it). The
#: channel's access token is sent to the one chosen, so it is the operator's
#: list: a local fake in tests, for example.
WHATSAPP_API_BASES = [base.rstrip("/") for base in _list("WHATSAPP_API_BASES")] or [
    "https://graph.facebook.com"
]

#: Whether webhook endpoints may be on loopback or private addresses (and plain
#: http): the tests' receivers only. Off, a gym's endpoint cannot be pointed at
#: the machines beside Gymnasia.
WEBHOOK_ALLOW_PRIVATE = _flag("WEBHOOK_ALLOW_PRIVATE")
#: Seconds before each retry of a webhook delivery that did not get a 2xx: eight
#: tries over about an hour.
WEBHOOK_RETRY_DELAYS = [15, 60, 180, 300, 600, 900, 1500]

# E-mail through Django's own settings. Without a server, mails are written as
# files under the data directory (``make run`` says where).
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT") or 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = _flag("EMAIL_USE_TLS")
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = os.environ.get(
    "DEFAULT_FROM_EMAIL", "Gymnasia <gymnasia@localhost>"
)
#: The address staff open Gymnasia at, for the links in their mails; by default
#: the first of ALLOWED_HOSTS over https (under DEBUG, http://127.0.0.1:8000, the
#: address ``make run`` prints).
SITE_URL = os.environ.get("SITE_URL", "").rstrip("/") or (
    "http://127.0.0.1:8000"
    if DEBUG or not ALLOWED_HOSTS
    else f"https://{ALLOWED_HOSTS[0]}"
)
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
else:
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = DATA_DIR / "mail"


def _fernet_keys() -> list[str]:
    keys = _list("FIELD_ENCRYPTION_KEYS")
    if keys:
        return keys
    if not DEBUG:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS is not set. Give one or more comma-separated "
            "Fernet keys (the first encrypts, all decrypt)."
        )
    digest = hashlib.sha256(f"gymnasia-field-encryption:{SECRET_KEY}".encode()).digest()
    return [base64.urlsafe_b64encode(digest).decode()]


FIELD_ENCRYPTION_KEYS = _fernet_keys()

# Provider keys are passed through untouched; the SDKs also read their own
# *_BASE_URL variables.
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
ANTHROPIC_API_KEY = os.environ.get("ANTHROPIC_API_KEY", "")
GOOGLE_API_KEY = os.environ.get("GOOGLE_API_KEY", "")

INSTALLED_APPS = [
    "gymnasia.admin_site.GymnasiaAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "corsheaders",
    "axes",
    "gymnasia",
    "gymnasia.gyms",
    "gymnasia.nutrition",
    "gymnasia.classes",
    "gymnasia.memberships",
    "tools",
    "agents",
    "approvals",
]

MIDDLEWARE = [
    # gymnasia.middleware's classes are Django's, with hooks that stay on the
    # event loop under ASGI unless they may use the database.
    "gymnasia.middleware.SecurityMiddleware",
    "gymnasia.middleware.StaticFilesMiddleware",
    "agents.cors.CorsMiddleware",
    "gymnasia.middleware.SessionMiddleware",
    "gymnasia.middleware.LocaleMiddleware",
    "gymnasia.middleware.CommonMiddleware",
    "gymnasia.middleware.CsrfViewMiddleware",
    "gymnasia.middleware.AuthenticationMiddleware",
    "gymnasia.middleware.GymTimeZoneMiddleware",
    "gymnasia.middleware.MessageMiddleware",
    "gymnasia.middleware.XFrameOptionsMiddleware",
    "gymnasia.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: a locked-out sign-in's page says so in words.
    "axes.middleware.AxesMiddleware",
]

# Sign-in throttling (django-axes): after 5 wrong passwords for one username from
# one address, that pair is locked out for 15 minutes (a success clears the
# count); the page says so in words, and an owner lifts it in admin
# (gymnasia.admin). Axes checks first, then Django's own backend signs in.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = datetime.timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "gymnasia.sign_in.locked_out_page"
# The client's address as uvicorn gives it: a listed proxy's X-Forwarded-For only.
AXES_CLIENT_IP_CALLABLE = "gymnasia.sign_in.client_address"
# Its lists live in our admin, scoped to an owner's own people (gymnasia.admin).
AXES_ENABLE_ADMIN = False
# Failed sign-ins are kept (who, from where, when); successes are not logged.
AXES_DISABLE_ACCESS_LOG = True
# No banner of its version at every start of a process.
AXES_VERBOSE = False
# Django's deploy checks for these three look for its own dotted paths; the
# subclasses above stand in, and gymnasia.W001 checks that each is listed.
SILENCED_SYSTEM_CHECKS = ["security.W001", "security.W002", "security.W003"]

# Gymnasia's pages (admin, staff inbox, home) run only their own scripts, from
# their own files: no inline script, no eval. The widget's panel sends its own
# policy (agents.embedding); the API answers JSON; the demo stands in for a gym's
# own site, which embeds the widget from another origin.
CONTENT_SECURITY_POLICY = {
    "EXCLUDE_URL_PREFIXES": ["/api/", "/demo/"],
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'self'"],
    },
}

# CORS for the conversation API only (django-cors-headers); the origins that may
# read an answer are the allowed origins of the agent it concerns (agents.cors).
CORS_URLS_REGEX = r"^/api/v1/conversations(?:/|$)"
CORS_ALLOW_METHODS = ["GET", "POST", "OPTIONS"]
CORS_ALLOW_HEADERS = ["Authorization", "Content-Type", "Accept"]
CORS_PREFLIGHT_MAX_AGE = 600
# A client on the gym's own site reads how long to wait after a 429.
CORS_EXPOSE_HEADERS = ["Retry-After"]

ROOT_URLCONF = "gymnasia.urls"
ASGI_APPLICATION = "gymnasia.asgi.application"
WSGI_APPLICATION = "gymnasia.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database() -> dict[str, Any]:
    url = os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'gymnasia.sqlite3'}"
    config: dict[str, Any] = dict(dj_database_url.parse(url))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # The web server and the worker share one file: wait for locks instead of
        # failing, and take the write lock at the start of each transaction.
        config["OPTIONS"] = {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    else:
        # ASGI runs each request's database work in a thread of its own; a pool
        # lends those threads open connections instead of opening one per request.
        # And a backend notices within a second that its client died, even while
        # it waits for a lock, so a crashed worker's transaction is rolled back
        # instead of committing once the lock is released.
        # The server binds the parameters, and prepares a statement the second
        # time a connection runs it: a turn's statements are parsed and planned
        # once per connection, not at every call. (A pooler between the app and
        # PostgreSQL must then keep prepared statements per client.)
        config["OPTIONS"] = {
            **config.get("OPTIONS", {}),
            "pool": {"min_size": 2, "max_size": 20},
            "server_side_binding": True,
            "prepare_threshold": 2,
            "options": "-c client_connection_check_interval=1000",
        }
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # A Redis that is away is told at once, not after a request's worth
            # of waiting: the rate limits then count in memory (agents.limits).
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
        "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    }
else:
    # The embedded default serves the web app from one process, so counters such as
    # rate limits can live in its memory.
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    }

_VALIDATORS = "django.contrib.auth.password_validation"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"{_VALIDATORS}.UserAttributeSimilarityValidator"},
    {"NAME": f"{_VALIDATORS}.MinimumLengthValidator"},
    {"NAME": f"{_VALIDATORS}.CommonPasswordValidator"},
    {"NAME": f"{_VALIDATORS}.NumericPasswordValidator"},
]

LANGUAGE_CODE = "es"
LANGUAGES = [("es", _("Spanish")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# Security: production defaults, relaxed only for local development.
# Whether a request came over HTTPS is the server's to say: uvicorn believes
# X-Forwarded-Proto, as X-Forwarded-For, only from the proxies listed in
# FORWARDED_ALLOW_IPS (``serve``); Django reading the header itself would believe
# it from any client.
SECURE_PROXY_SSL_HEADER = None
SECURE_SSL_REDIRECT = not DEBUG
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = 0 if DEBUG else 31_536_000
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# The demo gym's website (with the widget and signed-in demo members) is part of the
# embedded default only.
DEMO_SITE = DEBUG
CSRF_TRUSTED_ORIGINS = _list("CSRF_TRUSTED_ORIGINS")

# Celery. Without a broker URL the embedded default uses kombu's filesystem
# transport, which needs no server (the URL names a host all the same, or kombu
# warns that none was supplied).
CELERY_BROKER_URL = (
    os.environ.get("CELERY_BROKER_URL") or REDIS_URL or "filesystem://localhost/"
)
CELERY_BROKER_FOLDER = DATA_DIR / "broker"
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
# Longer than any task may run, so a task still running is never handed to a
# second worker.
CELERY_BROKER_VISIBILITY_TIMEOUT = 3600


def _not_the_announcement(record: Any) -> bool:
    """Beat sends ``approvals.announce`` every second; its three lines a second
    (sent, received, succeeded) would bury everything else in the log."""
    return "approvals.announce" not in record.getMessage()


LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    },
    "filters": {
        "no_announcement": {
            "()": "django.utils.log.CallbackFilter",
            "callback": _not_the_announcement,
        },
        # No decision link's token in a log line (Django's own warnings name the
        # path of a refused page).
        "link_tokens_hidden": {"()": "gymnasia.logs.LinkTokensHidden"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["no_announcement", "link_tokens_hidden"],
        }
    },
    "root": {"handlers": ["console"], "level": "INFO"},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # One line per HTTP request of the SDKs and integrations is noise.
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
    },
}
TOOLS_EXECUTION_TIMEOUT = 10  # seconds a tool may run before it is stopped
# The factory giving a tool call its integrations' clients (``tools.context``);
# tests name one whose clients misbehave on purpose.
TOOLS_CLIENTS = "tools.integrations.client_for"

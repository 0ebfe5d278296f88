"""Settings, read from the environment: SQLite and in-memory channels unless told otherwise.

DATABASE_URL selects another database (PostgreSQL); REDIS_URL selects channels_redis.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
import plotly
from csp.constants import NONE, SELF

BASE_DIR = Path(__file__).resolve().parent.parent
# Templates, static files and migrations live inside the traces package, so an installed
# wheel serves the same pages as a checkout. A checkout keeps its SQLite file beside
# manage.py; an installed package keeps it in the working directory.
LOCAL_DIR = BASE_DIR if (BASE_DIR / "manage.py").exists() else Path.cwd()

SECRET_KEY = os.environ.get(
    "DJANGO_SECRET_KEY", "loop-inspector-local-only-key-set-DJANGO_SECRET_KEY-when-shared"
)
DEBUG = os.environ.get("DJANGO_DEBUG", "") == "1"
ALLOWED_HOSTS = [
    h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]").split(",") if h
]
if os.environ.get("PYTEST_CURRENT_TEST") is not None or "pytest" in os.environ.get("_", ""):
    ALLOWED_HOSTS.append("testserver")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.contenttypes",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "channels",
    "traces",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
]

ROOT_URLCONF = "inspector.urls"
ASGI_APPLICATION = "inspector.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "csp.context_processors.nonce",
            ],
        },
    }
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{LOCAL_DIR / 'db.sqlite3'}", conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    DATABASES["default"]["TEST"] = {"NAME": str(LOCAL_DIR / "test-db.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
CHANNEL_LAYERS = {
    "default": (
        {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py times socket reads out after 5 s, which would kill every viewer
            # socket that has been quiet for 5 s (channels_redis blocks on reads).
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 30}]},
        }
        if REDIS_URL
        else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    )
}

STATIC_URL = "/static/"
# Our own files are found in traces/static by the app finder; plotly.js is served from
# the plotly package itself (no CDN, no copy in the repo).
STATICFILES_DIRS = [
    ("plotly", Path(plotly.__file__).resolve().parent / "package_data"),
]
# Static files are served from the app's folders by WhiteNoise (no collectstatic step);
# set STATIC_ROOT to collect them for a deployment.
STATIC_ROOT = os.environ.get("STATIC_ROOT") or None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Uploads stream to temporary files beyond 8 MB; the trace limit is in INSPECTOR.
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 600 * 1024 * 1024

USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en"

# No inline script anywhere: scripts come from our own static files only.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Loop Inspector's own settings, merged over traces.conf.DEFAULTS.
INSPECTOR: dict = {}
# A JSON price file overriding the bundled table (same shape; per million tokens).
INSPECTOR_PRICES = os.environ.get("INSPECTOR_PRICES", "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

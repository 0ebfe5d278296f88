"""Settings, read from the environment: SQLite and in-memory channels unless told otherwise.

DATABASE_URL selects another database (PostgreSQL); REDIS_URL selects channels_redis;
INSPECTOR_S3_BUCKET keeps originals in S3-compatible object storage instead of a folder.
docs/settings.md lists every variable read here and every key of INSPECTOR (traces.conf,
each also read from the environment as INSPECTOR_<KEY>). Numbers are read through
traces.environment: a value that does not parse is reported by a system check
(traces.checks, which also refuses unsafe shared-mode settings), not a traceback here.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
import plotly
from csp.constants import NONE, SELF

from traces.environment import Environment

env = Environment()

BASE_DIR = Path(__file__).resolve().parent.parent
# Templates, static files and migrations live inside the traces package, so an installed
# wheel serves the same pages as a checkout. A checkout keeps its SQLite file beside
# manage.py; an installed package keeps it in the working directory.
LOCAL_DIR = BASE_DIR if (BASE_DIR / "manage.py").exists() else Path.cwd()

DEFAULT_SECRET_KEY = "loop-inspector-local-only-key-set-DJANGO_SECRET_KEY-when-shared"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", DEFAULT_SECRET_KEY)
DEBUG = os.environ.get("DJANGO_DEBUG", "") == "1"
ALLOWED_HOSTS = [
    h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]").split(",") if h
]
# Shared mode (see README, "Shared deployment"): every page, API call and websocket needs
# a user, an API token or a share link. Forced on when a non-loopback host is allowed;
# traces.checks refuses to start it with the default secret key or DEBUG.
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1", "testserver"}
INSPECTOR_AUTH = os.environ.get("INSPECTOR_AUTH", "") == "1" or any(
    h not in LOOPBACK_HOSTS for h in ALLOWED_HOSTS
)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "channels",
    "huey.contrib.djhuey",
    "axes",
    "traces",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "inspector.middleware.AsyncWhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "traces.access.cross_site.CrossSiteGuard",
    "traces.pages.middleware.VisibleNulMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",
]

# Login attempts are counted per user name and address (django-axes): after
# INSPECTOR_LOGIN_FAILURES wrong passwords the pair is locked out for
# INSPECTOR_LOGIN_COOLOFF_MINUTES, on both login pages (/accounts/login/ and the admin's),
# answered 429 (issue 26: 40 wrong passwords in 9.5 s, then the right one worked).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.get("INSPECTOR_LOGIN_FAILURES", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env.get("INSPECTOR_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "accounts/locked.html"
AXES_VERBOSE = False

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
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "traces.access.rules.context",
                "csp.context_processors.nonce",
            ],
        },
    }
]

DATABASES = {"default": dj_database_url.config(default=f"sqlite:///{LOCAL_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One connection per request, closed when the request ends (CONN_MAX_AGE = 0): under
    # ASGI each request's sync code runs on a thread of its own, so a connection kept for
    # reuse is never reused, and it stayed open until the collector freed its thread's
    # objects (issue 26: 9,991 open after ~40,000 requests, then "unable to open
    # database file"). Opening one costs ~0.1 ms.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    DATABASES["default"]["TEST"] = {"NAME": str(LOCAL_DIR / "test-db.sqlite3")}
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and (
    os.environ.get("INSPECTOR_DB_PGBOUNCER") == "1"
):
    # Behind PgBouncer in transaction pooling mode: PgBouncer is the pool, so no pool of
    # our own, a connection per request or task (given back at its end), and nothing that
    # outlives a transaction on a server connection PgBouncer may hand to someone else:
    # no server-side cursors, no prepared statements (psycopg prepares a query it has run
    # 5 times unless told not to).
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = None
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and (
    os.environ.get("INSPECTOR_DB_POOL", "1") != "0"
):
    # PostgreSQL: each process keeps a pool of connections (psycopg_pool, Django's
    # built-in pooling) instead of one persistent connection per thread, so web processes,
    # their threads and queue workers stay under the server's max_connections: at most
    # INSPECTOR_DB_POOL_MAX per process; a thread waits up to INSPECTOR_DB_POOL_TIMEOUT s
    # for one. Pooling requires CONN_MAX_AGE = 0 (a connection goes back to the pool when
    # Django closes it: at the end of each request and each queue task).
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": env.get("INSPECTOR_DB_POOL_MIN", 2),
        "max_size": env.get("INSPECTOR_DB_POOL_MAX", 16),
        "timeout": env.get("INSPECTOR_DB_POOL_TIMEOUT", 30.0),
    }
# How many processes (web servers + queue workers) open connections to this database:
# the connection-budget check (traces.W002) compares processes x INSPECTOR_DB_POOL_MAX
# with the server's max_connections.
INSPECTOR_DB_PROCESSES = env.get("INSPECTOR_DB_PROCESSES", 4)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Originals (uploaded files, zstd-compressed) go through Django's storage API: a folder
# by default; an S3-compatible bucket when INSPECTOR_S3_BUCKET is set, so every web and
# worker machine reads and writes the same store (see traces.storage.originals).
INSPECTOR_DATA_DIR = Path(os.environ.get("INSPECTOR_DATA_DIR") or LOCAL_DIR / "data")
INSPECTOR_S3_BUCKET = os.environ.get("INSPECTOR_S3_BUCKET", "")


def s3_storage(bucket: str) -> dict:
    """django-storages' S3 backend for the bucket, from the INSPECTOR_S3_* variables;
    credentials come from boto3's usual chain (AWS_ACCESS_KEY_ID and
    AWS_SECRET_ACCESS_KEY, a profile, an instance role)."""
    endpoint = os.environ.get("INSPECTOR_S3_ENDPOINT_URL") or None
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            "endpoint_url": endpoint,
            "region_name": os.environ.get("INSPECTOR_S3_REGION") or None,
            "location": os.environ.get("INSPECTOR_S3_PREFIX", ""),
            # MinIO, moto and most S3-compatible servers only route path-style requests.
            "addressing_style": os.environ.get("INSPECTOR_S3_ADDRESSING_STYLE")
            or ("path" if endpoint else None),
            "file_overwrite": True,  # names are unique per trace chunk; a retry rewrites
            "default_acl": None,
            "querystring_auth": True,  # objects are private; no URL is ever handed out
        },
    }


STORAGES = {
    "default": (
        s3_storage(INSPECTOR_S3_BUCKET)
        if INSPECTOR_S3_BUCKET
        else {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(INSPECTOR_DATA_DIR), "allow_overwrite": True},
        }
    ),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

REDIS_URL = os.environ.get("REDIS_URL", "")
CHANNEL_LAYERS = {
    "default": (
        {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py times socket reads out after 5 s, which would kill every viewer
            # socket that has been quiet for 5 s (channels_redis blocks on reads).
            # Hundreds of viewer sockets closing at once each leave their group: room
            # for them in the pool (consumers also retry; see traces.live.consumers).
            # A viewer's channel holds up to `capacity` messages (batches of events) for
            # `expiry` seconds (channels_redis defaults to 100 and 60); past either they
            # are dropped, logged at INFO ("channels over capacity", see LOGGING). Nothing
            # is lost for good: the consumer fills a hole from the stored events when a
            # later message arrives, and the page's ping (every 5 s) fetches a lost last
            # one (traces.live.consumers); bench/load.py counts what viewers miss.
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30, "max_connections": 1000}],
                "capacity": env.get("INSPECTOR_CHANNEL_CAPACITY", 2000),
                "expiry": 60,
            },
        }
        if REDIS_URL
        # channels' in-memory layer, minus its per-message walks (traces.live.memory_layer)
        else {"BACKEND": "traces.live.memory_layer.FanOutMemoryLayer"}
    )
}

# INSPECTOR_DATA_DIR (above) also receives large uploads, streamed to `uploads/` before a
# background job ingests them.

# Background work (live report refreshes, large uploads, reanalysis) runs on Huey.
# INSPECTOR_QUEUE: "embedded" (the default without REDIS_URL) runs Huey's own consumer
# threads inside the web process on an in-memory queue, so nothing else needs running;
# "redis" (the default with REDIS_URL) queues in Redis for `manage.py run_huey` workers
# on any machine; "immediate" runs each task inline when it is queued (tests).
INSPECTOR_QUEUE = os.environ.get("INSPECTOR_QUEUE", "redis" if REDIS_URL else "embedded")
HUEY = (
    {
        "huey_class": "huey.RedisHuey",
        "name": os.environ.get("INSPECTOR_QUEUE_NAME", "loop-inspector"),
        "url": REDIS_URL,
        "immediate": False,
        "consumer": {"workers": 2, "worker_type": "thread"},
    }
    if INSPECTOR_QUEUE == "redis"
    else {
        # Huey's MemoryHuey whose idle workers wake when a task is queued, not poll
        "huey_class": "traces.taskqueue.wake.WakingMemoryHuey",
        "name": "loop-inspector",
        "immediate": INSPECTOR_QUEUE == "immediate",
    }
)

# Per-token rate limits count in the cache: Redis when given, so every process shares them.
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
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
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "traces:list"
SESSION_COOKIE_SAMESITE = "Lax"
# Shared mode assumes HTTPS in front (a TLS-terminating proxy that sets X-Forwarded-Proto);
# INSPECTOR_HTTPS=0 serves a plain-HTTP private network instead (check --deploy warns).
if INSPECTOR_AUTH and os.environ.get("INSPECTOR_HTTPS", "1") == "1":
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.get("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = os.environ.get("SECURE_HSTS_INCLUDE_SUBDOMAINS", "1") == "1"
    SECURE_HSTS_PRELOAD = os.environ.get("SECURE_HSTS_PRELOAD", "") == "1"
    # Submitting the domain to browsers' preload list is a separate, lasting decision.
    SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
if INSPECTOR_AUTH:
    CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Loop Inspector's own settings: a key here wins over its INSPECTOR_<KEY> environment
# variable, which wins over traces.conf.DEFAULTS (INSPECTOR_PRICES is the PRICES key).
INSPECTOR: dict = {}
# Where the recording proxy sends each vendor's calls (never taken from a request); any
# OpenAI-compatible server (vLLM, Ollama, LiteLLM) by setting. Empty: that vendor is off.
INSPECTOR_UPSTREAM_ANTHROPIC = os.environ.get(
    "INSPECTOR_UPSTREAM_ANTHROPIC", "https://api.anthropic.com"
)
INSPECTOR_UPSTREAM_OPENAI = os.environ.get("INSPECTOR_UPSTREAM_OPENAI", "https://api.openai.com/v1")
INSPECTOR_UPSTREAM_GEMINI = os.environ.get(
    "INSPECTOR_UPSTREAM_GEMINI", "https://generativelanguage.googleapis.com"
)
INSPECTOR_UPSTREAM_OPENROUTER = os.environ.get(
    "INSPECTOR_UPSTREAM_OPENROUTER", "https://openrouter.ai/api/v1"
)
# Bedrock Runtime: `{region}` is the region the forward proxy saw in the host.
INSPECTOR_UPSTREAM_BEDROCK = os.environ.get(
    "INSPECTOR_UPSTREAM_BEDROCK", "https://bedrock-runtime.{region}.amazonaws.com"
)
# Extra roots the proxy trusts for its upstreams (a TLS-inspecting company proxy, a
# local stand-in); empty: the public roots only.
INSPECTOR_UPSTREAM_CA_BUNDLE = os.environ.get("INSPECTOR_UPSTREAM_CA_BUNDLE", "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # No credential from a URL's query in any log line (inspector.log_masking).
    "filters": {"mask_query": {"()": "inspector.log_masking.MaskQueryCredentials"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["mask_query"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    # A broadcast that found a viewer's channel full is not silent (viewers catch up).
    "loggers": {"channels_redis": {"level": "INFO"}},
}

# What did not parse above (each a sentence naming its variable), reported by traces.checks.
INSPECTOR_ENVIRONMENT_PROBLEMS = env.problems

"""Assay settings: every value comes from the environment and bad values fail loudly.

The zero-config defaults (SQLite under var/, a filesystem Celery broker) exist so that
`make run` works on a fresh machine; production sets DATABASE_URL, CELERY_BROKER_URL,
REDIS_URL, SECRET_KEY and ALLOWED_HOSTS.
"""

import os
import re
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("ASSAY_VAR_DIR", BASE_DIR / "var"))

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off."
    )


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_map(name: str) -> dict[str, str]:
    """ "key=value,key=value" as a dict; a malformed pair or a repeated key fails."""
    mapping: dict[str, str] = {}
    for pair in env_list(name, []):
        key, sep, value = (part.strip() for part in pair.partition("="))
        if not sep or not key or not value:
            raise ImproperlyConfigured(
                f"{name}: {pair!r} is not of the form key=value "
                "(pairs separated by commas)."
            )
        if key in mapping:
            raise ImproperlyConfigured(f"{name} names {key!r} more than once.")
        mapping[key] = value
    return mapping


def env_name(name: str) -> str:
    """A name made for machines (letters, digits, `_`, `-`, `.`), or ""."""
    raw = os.environ.get(name, "").strip()
    if not re.fullmatch(r"[A-Za-z0-9_.-]{0,63}", raw):
        raise ImproperlyConfigured(
            f"{name}={raw!r} may hold only letters, digits, '_', '-' and '.' "
            "(63 at most)."
        )
    return raw


def env_url(name: str) -> str:
    raw = os.environ.get(name, "").strip()
    if raw and not raw.startswith(("https://", "http://")):
        raise ImproperlyConfigured(f"{name}={raw!r} must be an http(s):// URL.")
    return raw


DEBUG = env_bool("DEBUG", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off "
            "(for local use run `make run`, which sets DEBUG=1)."
        )
    SECRET_KEY = "insecure-development-key-only-used-with-DEBUG"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off.")
if not DEBUG and "*" in ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS may not contain '*' when DEBUG is off.")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "assay.admin_site.AssayAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "axes",
    "auditlog",
    # Its templates and static files serve the API's docs page without a CDN.
    "ninja",
    "reviewqueue",
    "benchmark",
    "judging",
    "construction",
    "annotation",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions, before CommonMiddleware (Django's documented place): the
    # language cookie or the browser's Accept-Language, for everyone.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "assay.middleware.RefuseNulMiddleware",
    "assay.middleware.ContentSecurityPolicyMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: a signed-in person's saved interface language wins over
    # the cookie and Accept-Language that LocaleMiddleware read.
    "benchmark.language.UserLanguageMiddleware",
    # After authentication: it records the signed-in user as the actor of changes
    # (django-auditlog's, reading the client's address as sign-ins do).
    "assay.client_address.AuditlogMiddleware",
    "assay.middleware.HtmxSignedOutMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into its lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "assay.urls"
WSGI_APPLICATION = "assay.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "benchmark.context_processors.roles",
            ],
            # Django's i18n tags, with a literal's {% translate %} remembered per
            # language (the tag's cost on every page: assay/i18n_library.py), and
            # fragments rendered once per language (assay/fragments.py).
            "libraries": {
                "i18n": "assay.i18n_library",
                "fragments": "assay.fragments",
            },
        },
    },
]
# templates.W003 names a tag library registered twice: `i18n` above replaces
# Django's own on purpose, and the check cannot tell a replacement from a clash.
SILENCED_SYSTEM_CHECKS = ["templates.W003"]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'assay.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The demo's web server, worker and several people share one file. WAL lets reads
    # go on beside the one writer; IMMEDIATE takes the write lock when a transaction
    # begins, so a transaction that read first never fails to upgrade its lock
    # ("database is locked" with no wait); the timeout is how long a writer queues.
    DATABASES["default"]["OPTIONS"] = {
        **DATABASES["default"].get("OPTIONS", {}),
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # Tests run on a file next to the database, not in memory, so that they meet the
    # same locking as the demo.
    _sqlite_file = Path(DATABASES["default"]["NAME"])
    DATABASES["default"]["TEST"] = {
        "NAME": str(_sqlite_file.with_name(f"test_{_sqlite_file.name}"))
    }
elif os.environ.get("DATABASE_TEST_NAME"):
    # The database the test suite creates and drops (Django's default: test_ and
    # the name above). `make test` names one per checkout, so that two checkouts'
    # suites on one server never share, or drop, each other's.
    DATABASES["default"]["TEST"] = {"NAME": env_name("DATABASE_TEST_NAME")}

# The review queue's hot statements are prepared once per connection on PostgreSQL
# (reviewqueue/sql.py); off behind a connection pooler that cannot keep them.
QUEUE_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Sign-in throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address, that pair is locked out for LOGIN_LOCKOUT_MINUTES (a
# manager can lift it: `manage.py axes_reset_username NAME`). Keyed by the pair, so a
# guesser cannot lock a colleague out from everywhere.
# Axes first: it refuses a locked-out sign-in before any password is checked. New
# sign-ins go through UserWithRolesBackend (the user and their roles read in one
# statement per request); ModelBackend stays listed because a session stores the
# path of the backend that signed it in and is only loaded through a listed one —
# sessions from before keep working (benchmark/auth_backends.py).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "benchmark.auth_backends.UserWithRolesBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# Failed sign-ins are kept (not only counted until a success resets them) so the
# audit log can show them; axes keeps the last 1,000 per username.
AXES_ENABLE_ACCESS_FAILURE_LOG = True
# The reverse proxies in front of the web process, each appending to X-Forwarded-For
# the address it was reached from (DEPLOY.md's nginx: 1). The client's address — what
# sign-in throttling and the audit log record — is then read from that header
# (assay/client_address.py); with 0 the header is ignored and REMOTE_ADDR is the
# client's. Behind a proxy, 0 counts everyone as the proxy: one stranger's wrong
# passwords would lock a user out from everywhere.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)
if TRUSTED_PROXY_COUNT > 5:
    raise ImproperlyConfigured(
        f"TRUSTED_PROXY_COUNT={TRUSTED_PROXY_COUNT}: more than 5 proxies in a row is "
        "not a deployment but a mistake (nginx alone is 1)."
    )
AXES_CLIENT_IP_CALLABLE = "assay.client_address.client_address"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "benchmark:home"
LOGOUT_REDIRECT_URL = "login"

# Single sign-on (OpenID Connect, mozilla-django-oidc): on when OIDC_RP_CLIENT_ID is
# set; password sign-in stays beside it. The provider's endpoints come from its
# discovery document or are named one by one. Every sign-in sets the user's roles
# from the OIDC_ROLE_CLAIM values mapped by OIDC_ROLE_MAP ("idp-group=role,...";
# benchmark.apps refuses role names Assay does not have).
OIDC_RP_CLIENT_ID = os.environ.get("OIDC_RP_CLIENT_ID", "").strip()
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_DISCOVERY_URL = env_url("OIDC_OP_DISCOVERY_URL")
OIDC_OP_AUTHORIZATION_ENDPOINT = env_url("OIDC_OP_AUTHORIZATION_ENDPOINT")
OIDC_OP_TOKEN_ENDPOINT = env_url("OIDC_OP_TOKEN_ENDPOINT")
OIDC_OP_USER_ENDPOINT = env_url("OIDC_OP_USER_ENDPOINT")
OIDC_OP_JWKS_ENDPOINT = env_url("OIDC_OP_JWKS_ENDPOINT")
OIDC_RP_SIGN_ALGO = os.environ.get("OIDC_RP_SIGN_ALGO", "RS256").strip()
OIDC_RP_SCOPES = os.environ.get("OIDC_RP_SCOPES", "openid email profile").strip()
OIDC_ROLE_CLAIM = os.environ.get("OIDC_ROLE_CLAIM", "groups").strip()
OIDC_ROLE_MAP = env_map("OIDC_ROLE_MAP")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
_OIDC_ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": OIDC_OP_AUTHORIZATION_ENDPOINT,
    "OIDC_OP_TOKEN_ENDPOINT": OIDC_OP_TOKEN_ENDPOINT,
    "OIDC_OP_USER_ENDPOINT": OIDC_OP_USER_ENDPOINT,
    "OIDC_OP_JWKS_ENDPOINT": OIDC_OP_JWKS_ENDPOINT,
}
if OIDC_ENABLED:
    if not OIDC_RP_CLIENT_SECRET:
        raise ImproperlyConfigured("OIDC_RP_CLIENT_ID is set but not its secret.")
    _missing = [name for name, url in _OIDC_ENDPOINTS.items() if not url]
    if not OIDC_OP_DISCOVERY_URL and _missing:
        raise ImproperlyConfigured(
            f"Single sign-on needs OIDC_OP_DISCOVERY_URL or {', '.join(_missing)}."
        )
    # Symmetric algorithms would sign with the client secret; providers sign ID
    # tokens with a key they publish.
    if OIDC_RP_SIGN_ALGO not in {"RS256", "RS384", "RS512", "ES256", "ES384"}:
        raise ImproperlyConfigured(
            f"OIDC_RP_SIGN_ALGO={OIDC_RP_SIGN_ALGO!r} is not one of RS256, RS384, "
            "RS512, ES256, ES384."
        )
    if "openid" not in OIDC_RP_SCOPES.split():
        raise ImproperlyConfigured("OIDC_RP_SCOPES must include openid.")
    if not OIDC_ROLE_CLAIM:
        raise ImproperlyConfigured("OIDC_ROLE_CLAIM may not be empty.")
    AUTHENTICATION_BACKENDS.append("benchmark.sso.AssayOIDCBackend")
elif OIDC_RP_CLIENT_SECRET or OIDC_OP_DISCOVERY_URL or any(_OIDC_ENDPOINTS.values()):
    raise ImproperlyConfigured(
        "Single sign-on settings are set but OIDC_RP_CLIENT_ID is not."
    )
# The provider's code is single use and PKCE binds it to this browser's session.
OIDC_USE_PKCE = True
OIDC_TIMEOUT = env_int("OIDC_TIMEOUT_SECONDS", 10, minimum=1)
# The sign-in page says that single sign-on failed.
LOGIN_REDIRECT_URL_FAILURE = "/login/?sso=failed"

LANGUAGE_CODE = "en"
# The interface languages (#30): the experts' Chinese, the reviewers' Russian and
# Vietnamese. An item's own languages are its renderings', not these.
LANGUAGES = [
    ("en", "English"),
    ("zh-hans", "简体中文"),
    ("ru", "Русский"),
    ("vi", "Tiếng Việt"),
]
# One project catalogue per language: locale/<lang>/LC_MESSAGES/django.po and
# djangojs.po, compiled by `make run` / `make test` (bin/compile_messages.sh).
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG

DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Sessions are stored in the database and read through the cache: every request
# reads its session, and a cache hit costs no query (bench/queue_bench.py).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

# Redis backs cross-worker rate limits and the report cache; without it (the demo
# default) both fall back to in-process implementations for a single worker host.
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured(
        f"REDIS_URL={REDIS_URL!r} must start with redis://, rediss:// or unix://."
    )
# Every key Assay writes in Redis — the cache's, the LLM limits' and, with a Redis
# broker, Celery's queues and its bookkeeping — begins with "REDIS_NAMESPACE:" when
# it is set, so several instances (or the `make test` runs of several checkouts)
# share one Redis without reading or clearing each other's keys. `make test` runs
# the suite in several processes (pytest-xdist, which names each in
# PYTEST_XDIST_WORKER): each process, and the Celery workers its tests start, keep
# their own keys, as each has its own test database.
REDIS_NAMESPACE = env_name("REDIS_NAMESPACE")
if REDIS_NAMESPACE and (test_process := env_name("PYTEST_XDIST_WORKER")):
    REDIS_NAMESPACE = f"{REDIS_NAMESPACE}-{test_process}"
REDIS_KEY_PREFIX = f"{REDIS_NAMESPACE}:" if REDIS_NAMESPACE else ""
if REDIS_URL:
    CACHES = {
        "default": {
            # Django's, cleared by its own keys, one Redis client per pool
            # (assay/cache.py).
            "BACKEND": "assay.cache.NamespacedRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"{REDIS_KEY_PREFIX}cache",
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://"
if CELERY_BROKER_URL == "filesystem://":
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": REDIS_KEY_PREFIX}
elif not CELERY_BROKER_URL.startswith("amqp://"):
    raise ImproperlyConfigured(
        f"CELERY_BROKER_URL={CELERY_BROKER_URL!r} is not a supported broker URL "
        "(use redis://, amqp:// or leave unset for the embedded filesystem broker)."
    )
# Uploads up to this size are imported in the request (errors shown at once); larger
# ones wait in IMPORT_UPLOAD_DIR, which the web process and the workers must share,
# for a worker to import them (benchmark.import_jobs).
IMPORT_IN_REQUEST_MAX_BYTES = env_int("IMPORT_IN_REQUEST_MAX_BYTES", 10 * 2**20)
# A background import still running after this long is stopped (nothing is written)
# and its page says so; a file that takes longer is not one file's work.
IMPORT_TIME_LIMIT_SECONDS = env_int("IMPORT_TIME_LIMIT_SECONDS", 1800, minimum=10)
# A bulk item call of the REST API is imported in its request, like an upload up to
# IMPORT_IN_REQUEST_MAX_BYTES, but may be larger: 10,000 paper-like items in four
# languages are 46 MB of JSON (DATA_UPLOAD_MAX_MEMORY_SIZE still caps forms).
API_BULK_MAX_BYTES = env_int("API_BULK_MAX_BYTES", 64 * 2**20, minimum=2**20)
# Compressed imports (an Inspect .eval zip, a release Parquet file) are checked
# against what they expand to before anything is decompressed: a few KB can hold
# gigabytes. One zip member or Parquet column chunk, then all of them together; and
# one Parquet text cell, in characters (no item text comes near it).
IMPORT_MAX_MEMBER_BYTES = env_int("IMPORT_MAX_MEMBER_BYTES", 256 * 2**20, minimum=2**20)
IMPORT_MAX_EXPANDED_BYTES = env_int(
    "IMPORT_MAX_EXPANDED_BYTES", 1024 * 2**20, minimum=2**20
)
IMPORT_MAX_CELL_CHARS = env_int("IMPORT_MAX_CELL_CHARS", 1_000_000, minimum=1000)
IMPORT_UPLOAD_DIR = Path(os.environ.get("IMPORT_UPLOAD_DIR") or VAR_DIR / "imports")
# Bootstrap resamples behind the agreement reports' CIs (the κ weights they headline
# are each benchmark's setting).
AGREEMENT_BOOTSTRAP_RESAMPLES = env_int(
    "AGREEMENT_BOOTSTRAP_RESAMPLES", 2000, minimum=100
)

CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = False

# One attempt of an LLM call, whole: connecting, sending, and every read of the
# answer (a provider that trickles or streams for ever is cut off here). Search
# queries (SEARCH_TIMEOUT_SECONDS) and webhook POSTs (WEBHOOK_TIMEOUT_SECONDS) are
# bounded the same way (assay/outbound.py).
LLM_REQUEST_TIMEOUT = env_int("LLM_REQUEST_TIMEOUT", 120, minimum=1)
# An LLM answer's body is read up to this many bytes; a longer one fails the call
# at once (never read whole). Streamed answers count their SSE framing too.
LLM_MAX_BODY_BYTES = env_int("LLM_MAX_BODY_BYTES", 32_000_000, minimum=1024)
# Endpoints name the environment variable holding their key; only names matching this
# pattern are read, so a manager cannot have SECRET_KEY or DATABASE_URL sent to a URL.
try:
    LLM_API_KEY_ENV_PATTERN = re.compile(
        os.environ.get("LLM_API_KEY_ENV_PATTERN", r"^[A-Z][A-Z0-9_]*_API_KEY$")
    )
except re.error as error:
    raise ImproperlyConfigured(
        f"LLM_API_KEY_ENV_PATTERN is not a valid regular expression: {error}."
    ) from None
# Hosts an endpoint's base URL may name (ALLOWED_HOSTS syntax: "api.openai.com",
# ".example.com" for a domain and its subdomains). Empty: any host — managers are
# trusted to point Assay at their providers, and workers make the calls, never the web
# process; set it where workers can reach internal services a manager must not.
LLM_ENDPOINT_HOSTS = env_list("LLM_ENDPOINT_HOSTS", [])
LLM_MAX_ATTEMPTS = env_int("LLM_MAX_ATTEMPTS", 5, minimum=1)
# Webhooks (api app): hosts a webhook URL may name, with LLM_ENDPOINT_HOSTS' syntax and
# reason — workers POST to it, and a manager must not aim them at internal services.
# Empty: any host.
WEBHOOK_HOSTS = env_list("WEBHOOK_HOSTS", [])
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10, minimum=1)
# A delivery is tried this many times, waiting BASE × 2^(attempt − 1) seconds (at most
# MAX) between tries, before it is marked failed; a person may re-send it then.
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6, minimum=1)
WEBHOOK_BACKOFF_BASE_SECONDS = env_int("WEBHOOK_BACKOFF_BASE_SECONDS", 30, minimum=1)
WEBHOOK_BACKOFF_MAX_SECONDS = env_int("WEBHOOK_BACKOFF_MAX_SECONDS", 3600, minimum=1)
LLM_PARSE_RETRIES = env_int("LLM_PARSE_RETRIES", 2, minimum=0)
# Search verification (construction): hosts a search service's base URL may name,
# with LLM_ENDPOINT_HOSTS' syntax and reason (workers send the queries). Empty: any
# public host; an internal address (assay.targets) only when named here.
SEARCH_SERVICE_HOSTS = env_list("SEARCH_SERVICE_HOSTS", [])
# One query is tried this many times (time-outs, connection errors, 429, 5xx, an
# answer that is not the service's JSON), waiting BASE × 2^(attempt − 1) ms between
# tries; then it has failed and its candidates are pending with the reason.
SEARCH_TIMEOUT_SECONDS = env_int("SEARCH_TIMEOUT_SECONDS", 15, minimum=1)
# A search answer longer than this is refused (the try fails), never read whole.
SEARCH_MAX_BODY_BYTES = env_int("SEARCH_MAX_BODY_BYTES", 5_000_000, minimum=1024)
SEARCH_MAX_ATTEMPTS = env_int("SEARCH_MAX_ATTEMPTS", 3, minimum=1)
SEARCH_BACKOFF_BASE_MS = env_int("SEARCH_BACKOFF_BASE_MS", 1000, minimum=1)
LLM_BACKOFF_BASE_MS = env_int("LLM_BACKOFF_BASE_MS", 1000, minimum=1)
LLM_BACKOFF_MAX_MS = env_int("LLM_BACKOFF_MAX_MS", 60000, minimum=1)
# However a provider misbehaves (429 storms included), one call gives up after this
# long, retries and backoff included; its item is then pending with the last error.
LLM_CALL_DEADLINE_SECONDS = env_int("LLM_CALL_DEADLINE_SECONDS", 900, minimum=1)
# A longer reply is refused (the call fails with the reason) and only its first
# LLM_MAX_REPLY_CHARS characters are kept for the record.
LLM_MAX_REPLY_CHARS = env_int("LLM_MAX_REPLY_CHARS", 200_000, minimum=1)
# A call's slot in an endpoint's shared concurrency limit is leased for this long and
# renewed while the call runs; a killed worker's slots free up after it.
LLM_LEASE_SECONDS = env_int("LLM_LEASE_SECONDS", 20, minimum=1)
# A run (labelling, evaluation, translation) whose workers have written nothing for
# this long is taken to have lost them (a killed worker) and is resumed when a worker
# starts. Keep it well above LLM_REQUEST_TIMEOUT: workers write when calls finish, so
# a shorter value would re-dispatch chunks whose slow calls are still in flight.
LABELLING_STALE_SECONDS = env_int(
    "LABELLING_STALE_SECONDS", 2 * LLM_REQUEST_TIMEOUT + 60, minimum=1
)
# How often a worker looks for such runs, after the look it takes when it starts: a
# run's heartbeat is the run's, so a chunk lost while another chunk of the same run
# was still running is found only once the run falls silent.
RUN_SWEEP_SECONDS = env_int("RUN_SWEEP_SECONDS", LABELLING_STALE_SECONDS, minimum=1)

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()
if LOG_LEVEL not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
    raise ImproperlyConfigured(
        f"LOG_LEVEL={LOG_LEVEL!r} is not one of DEBUG, INFO, WARNING, ERROR, CRITICAL."
    )
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # The HTTP client logs every LLM request at INFO; the gateway records them.
    # django-axes logs every sign-in at INFO; lockouts come at WARNING.
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
    },
}

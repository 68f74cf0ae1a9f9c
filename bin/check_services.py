"""Fail early, with a clear message, when the test services are unreachable."""

import os
import sys
from urllib.parse import urlparse

import psycopg
import redis


def main() -> int:
    database_url = os.environ["DATABASE_URL"]
    parsed = urlparse(database_url)
    try:
        psycopg.connect(
            host=parsed.hostname,
            port=parsed.port or 5432,
            user=parsed.username or "postgres",
            password=parsed.password,
            dbname="postgres",
            connect_timeout=5,
        ).close()
    except psycopg.Error as error:
        print(
            f"PostgreSQL is unreachable at {parsed.hostname}:{parsed.port or 5432} "
            f"({error}).\nStart it (e.g. `pg_ctlcluster --skip-systemctl-redirect "
            "$(ls /etc/postgresql) main start`) or set DATABASE_URL.",
            file=sys.stderr,
        )
        return 1
    for name in ("REDIS_URL", "CELERY_BROKER_URL"):
        url = os.environ[name]
        try:
            redis.Redis.from_url(url, socket_connect_timeout=5).ping()
        except redis.RedisError as error:
            print(
                f"Redis is unreachable at {url} ({error}).\nStart it (e.g. "
                "`redis-server --daemonize yes --bind 127.0.0.1 --port 6379`) "
                f"or set {name}.",
                file=sys.stderr,
            )
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

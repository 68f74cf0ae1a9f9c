import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def production_env(**overrides) -> dict:
    env = {
        "PATH": "/usr/bin:/bin",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "assay.example.org",
        "CSRF_TRUSTED_ORIGINS": "https://assay.example.org",
        "DATABASE_URL": "postgres://assay@db.example.org:5432/assay",
        "CELERY_BROKER_URL": "redis://redis.example.org:6379/1",
        "REDIS_URL": "redis://redis.example.org:6379/0",
        "SECURE_SSL_REDIRECT": "1",
        "SECURE_HSTS_SECONDS": "31536000",
        "SECURE_HSTS_PRELOAD": "1",
    }
    env.update(overrides)
    return {key: value for key, value in env.items() if value is not None}


def check_deploy(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.smoke
def test_check_deploy_passes_with_production_settings():
    result = check_deploy(production_env())
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.smoke
def test_check_deploy_catches_a_missing_hsts_setting():
    result = check_deploy(production_env(SECURE_HSTS_SECONDS=None))
    assert result.returncode != 0
    assert "security.W004" in result.stderr

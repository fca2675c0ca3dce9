"""Proof that the services pass really runs on PostgreSQL, Redis and a separate Celery worker."""

import os

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import EXPECT_SERVICES


@pytest.mark.services
@pytest.mark.django_db
def test_database_is_postgresql_in_the_services_pass():
    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        if EXPECT_SERVICES:
            pytest.fail("services pass is not running on PostgreSQL")
        pytest.skip("embedded pass: SQLite (set DATABASE_URL for PostgreSQL)")
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        assert cursor.fetchone()[0].startswith("PostgreSQL")
    assert connection.vendor == "postgresql"


@pytest.mark.services
def test_task_runs_in_a_separate_celery_worker_over_redis(celery_worker):
    from config.celery import app, ping

    assert app.conf.broker_url.startswith("redis://")
    result = ping.delay().get(timeout=30)
    assert result["pid"] == celery_worker.pid
    assert result["pid"] != os.getpid()

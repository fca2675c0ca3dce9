"""The ASGI entry point (`make serve`: gunicorn with uvicorn workers, gunicorn.conf.py).

Django's ASGI handler with a request thread that a streamed response lets go (common/asgi.py)."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

from common.asgi import RedlineASGIHandler  # noqa: E402 - needs the apps loaded

application = RedlineASGIHandler()

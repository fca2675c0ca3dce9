"""gunicorn's own defaults (sync workers, no access log), for the benches that serve config.wsgi.

Without `-c`, gunicorn would read the repository's `gunicorn.conf.py`, whose uvicorn workers
serve only the ASGI app (config.asgi)."""

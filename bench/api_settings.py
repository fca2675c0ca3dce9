"""Settings for bench/api_throughput.py: the app's settings plus one bare view to compare with."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.api_urls"
DEBUG = False
LOGGING = {"version": 1, "disable_existing_loggers": True}

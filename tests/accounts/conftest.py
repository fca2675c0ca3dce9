import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _clear_counters():
    """Log-in failure counters live in the cache: every test starts and ends without any."""
    cache.clear()
    yield
    cache.clear()

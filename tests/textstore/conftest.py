import pytest

from textstore.cache import text_cache


@pytest.fixture(autouse=True)
def _empty_text_cache():
    """The LRU is process-wide; each test starts cold so reads really go to storage."""
    text_cache.clear()
    yield
    text_cache.clear()

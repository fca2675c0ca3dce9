import pytest

from textstore.cache import caches_clear


@pytest.fixture(autouse=True)
def _empty_text_cache():
    """The LRU is process-wide; each test starts cold so reads really go to storage."""
    caches_clear()
    yield
    caches_clear()


@pytest.fixture(autouse=True)
def _empty_blob_table(request):
    """These tests count and damage blobs; data migrations (the practice design docs) seed a
    few. Start each database test from an empty table (the deletion is rolled back after)."""
    marker = request.node.get_closest_marker("django_db")
    if marker is None:
        return
    request.getfixturevalue("transactional_db" if marker.kwargs.get("transaction") else "db")
    from textstore.models import Blob

    Blob.objects.all().delete()

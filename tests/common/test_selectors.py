"""common.selectors: ids from client input and the one get()-or-NotFound read."""

import pytest
from django.contrib.auth.models import User

from common.exceptions import NotFound
from common.selectors import object_get_or_not_found, object_id_parse
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("raw", ["", "abc", "0", "-3", str(2**63), None, "1.5"])
def test_ids_that_cannot_be_ids_are_not_found(raw):
    with pytest.raises(NotFound):
        object_id_parse(raw)


def test_get_or_not_found_reads_one_row_without_ordering(django_assert_num_queries):
    user = make_user("ada")
    with django_assert_num_queries(1) as captured:
        found = object_get_or_not_found(User.objects.all(), pk=user.pk)
    assert found == user
    assert "ORDER BY" not in captured.captured_queries[0]["sql"]


def test_missing_and_filtered_out_rows_are_both_not_found():
    user = make_user("ada")
    with pytest.raises(NotFound):
        object_get_or_not_found(User.objects.all(), pk=user.pk + 1000)
    with pytest.raises(NotFound):
        object_get_or_not_found(User.objects.filter(is_active=False), pk=user.pk)

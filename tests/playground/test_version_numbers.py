"""`GET /api/v1/prompts/{id}/versions/{number}/`: a version by its number within its prompt."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from playground.exceptions import NotFound
from playground.selectors import version_id_by_number_for_user
from playground.services import grant_revoke, grant_set
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt, save

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("numbers-owner")


@pytest.fixture
def history(owner):
    prompt, v1 = make_prompt(owner, title="Numbered", system="First.\n")
    v2 = save(owner, prompt, v1, "second", system="Second.\n").version
    return prompt, v1, v2


def test_the_number_answers_what_the_version_api_answers(owner, history):
    prompt, v1, v2 = history
    api = api_client_for(owner)
    for version in (v1, v2):
        by_number = api.get(f"/api/v1/prompts/{prompt.pk}/versions/{version.number}/")
        by_id = api.get(f"/api/v1/versions/{version.pk}/")
        assert by_number.status_code == 200
        assert by_number.json() == by_id.json()
        assert by_number.json()["id"] == version.pk
        assert by_number.headers["ETag"] == by_id.headers["ETag"]
        assert by_number.headers["Cache-Control"] == by_id.headers["Cache-Control"]


def test_a_matching_etag_gets_304_without_a_body(owner, history):
    prompt, _, v2 = history
    api = api_client_for(owner)
    url = f"/api/v1/prompts/{prompt.pk}/versions/{v2.number}/"
    etag = api.get(url).headers["ETag"]
    again = api.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["ETag"] == etag


def test_unknown_numbers_and_other_peoples_prompts_are_404(owner, history):
    prompt, _, v2 = history
    stranger = api_client_for(make_user("numbers-stranger"))
    mine = api_client_for(owner)
    missing = mine.get(f"/api/v1/prompts/{prompt.pk}/versions/3/")
    zero = mine.get(f"/api/v1/prompts/{prompt.pk}/versions/0/")
    foreign = stranger.get(f"/api/v1/prompts/{prompt.pk}/versions/{v2.number}/")
    no_prompt = mine.get(f"/api/v1/prompts/{prompt.pk + 1000}/versions/1/")
    for response in (missing, zero, foreign, no_prompt):
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}
    anonymous = api_client_for(None).get(f"/api/v1/prompts/{prompt.pk}/versions/1/")
    assert anonymous.status_code == 401


def test_a_grant_reads_by_number_until_it_is_revoked(owner, history):
    prompt, v1, _ = history
    viewer = make_user("numbers-viewer")
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    api = api_client_for(viewer)
    url = f"/api/v1/prompts/{prompt.pk}/versions/{v1.number}/"
    first = api.get(url)
    assert first.status_code == 200
    grant_revoke(actor=owner, prompt=prompt, username=viewer.username)
    # A revoked reader with a valid ETag still gets 404, never 304.
    assert api.get(url, HTTP_IF_NONE_MATCH=first.headers["ETag"]).status_code == 404


def test_the_selector_is_scoped_to_the_user(owner, history):
    prompt, v1, v2 = history
    assert version_id_by_number_for_user(user=owner, prompt_id=prompt.pk, number=2) == v2.pk
    assert version_id_by_number_for_user(user=owner, prompt_id=str(prompt.pk), number="1") == v1.pk
    with pytest.raises(NotFound):
        version_id_by_number_for_user(user=make_user(), prompt_id=prompt.pk, number=1)
    with pytest.raises(NotFound):
        version_id_by_number_for_user(user=owner, prompt_id=prompt.pk, number="x")


def test_query_count_does_not_grow_with_history(owner):
    prompt, parent = make_prompt(owner, title="Long history", system="v1\n")
    api = api_client_for(owner)

    def queries(number: int) -> int:
        api.get(f"/api/v1/prompts/{prompt.pk}/versions/{number}/")  # warm the content cache
        with CaptureQueriesContext(connection) as ctx:
            assert api.get(f"/api/v1/prompts/{prompt.pk}/versions/{number}/").status_code == 200
        return len(ctx.captured_queries)

    short = queries(1)
    for n in range(2, 22):
        parent = save(owner, prompt, parent, system=f"v{n}\n").version
    assert queries(21) == short

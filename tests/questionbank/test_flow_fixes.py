"""Issue 12 in the question bank: an unknown ?kind= is an error, not everything; the question
page starts a prompt or a design doc for the question."""

import pytest
from django.test import Client

from tests.factories import api_client_for, make_user

pytestmark = pytest.mark.django_db


def test_unknown_kind_is_400_in_the_api_and_said_on_the_page():
    api = api_client_for(make_user("q"))
    response = api.get("/api/v1/questions/?kind=nonsense")
    assert response.status_code == 400
    assert "kind: unknown kind 'nonsense'" in response.json()["detail"]
    known = api.get("/api/v1/questions/?kind=product").json()
    assert known["results"] and {q["kind"] for q in known["results"]} == {"product"}
    page = Client().get("/questions/?kind=nonsense")
    html = page.content.decode()
    assert page.status_code == 400 and "Unknown filter “nonsense”" in html
    assert 'aria-current="page">Questions' in html.replace('href="/questions/" ', "")


def test_question_page_offers_a_prompt_and_a_design_doc():
    html = Client().get("/questions/prompt-playground/").content.decode()
    assert 'href="/playground/new/?question=prompt-playground"' in html
    assert "Start a prompt for this question" in html
    assert 'href="/reviews/new/?question=prompt-playground"' in html
    assert "Write a design doc for this question" in html
    user = make_user("writer")
    client = Client()
    client.force_login(user)
    new_prompt = client.get("/playground/new/?question=prompt-playground").content.decode()
    assert 'value="prompt-playground" selected' in new_prompt
    new_doc = client.get("/reviews/new/?question=prompt-playground").content.decode()
    assert 'value="prompt-playground" selected' in new_doc

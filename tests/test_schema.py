import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_openapi_schema_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    assert "/api/v1/questions/{slug}/" in text
    assert "/api/v1/auth/token/" in text
    for path in (
        "/api/v1/versions/{version_id}/text/",
        "/api/v1/versions/{version_id}/text/download/",
        "/api/v1/shared/{token}/text/",
        "/api/v1/shared/{token}/text/download/",
    ):
        assert path in text, path


@pytest.mark.django_db
def test_swagger_ui_is_served_without_a_cdn(client):
    html = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in html
    assert "cdn" not in html.lower()

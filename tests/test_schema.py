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


@pytest.mark.django_db
def test_fetch_operations_declare_etags_conditional_requests_and_text_heads(tmp_path):
    import yaml

    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(out))
    schema = yaml.safe_load(out.read_text())
    for path in (
        "/api/v1/versions/{version_id}/",
        "/api/v1/prompts/{prompt_id}/labels/{name}/version/",
    ):
        operation = schema["paths"][path]["get"]
        parameters = {(p["name"], p["in"]) for p in operation["parameters"]}
        assert {("If-None-Match", "header"), ("full", "query")} <= parameters, path
        for status in ("200", "304"):
            assert {"ETag", "Cache-Control"} <= set(operation["responses"][status]["headers"])
    shared = schema["paths"]["/api/v1/shared/{token}/"]["get"]
    assert ("full", "query") in {(p["name"], p["in"]) for p in shared["parameters"]}
    # A text is a string, or a long text's head with its range URL.
    system = schema["components"]["schemas"]["ContentOutput"]["properties"]["system"]
    kinds = system["oneOf"]
    assert kinds[0] == {"type": "string"}
    assert set(kinds[1]["required"]) == {"text", "truncated", "total", "text_url"}

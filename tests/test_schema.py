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


@pytest.mark.django_db
def test_typed_clients_get_arrays_bounds_and_every_status_an_operation_answers():
    """Issue #32: a generated client could not send `rows`, `graders`, `versions` or `models`
    (typed as objects), had no bounds for `against` and `Last-Event-ID`, and could not read
    the 200 `continue` answers when the child exists already."""
    from tests.schemacheck import api_schema_load

    document = api_schema_load().document
    schemas = document["components"]["schemas"]
    for component, field in (
        ("TestSetListCreateApiInputRequest", "rows"),
        ("TestSetReviseApiInputRequest", "rows"),
        ("EvaluationListCreateApiInputRequest", "versions"),
        ("EvaluationListCreateApiInputRequest", "models"),
        ("EvaluationListCreateApiInputRequest", "graders"),
    ):
        prop = schemas[component]["properties"][field]
        assert prop["type"] == "array" and "maxItems" in prop, (component, field, prop)
    assert schemas["Evaluation"]["properties"]["graders"]["items"]["required"] == ["type"]
    row = schemas["TestSetListCreateApiInputRequest"]["properties"]["rows"]["items"]
    assert set(row["properties"]) == {"variables", "expected", "note", "graders", "threshold"}
    assert row["properties"]["graders"]["type"] == "array"  # a promptfoo test's own assertions
    assert schemas["EvaluationListCreateApiInputRequest"]["properties"]["versions"]["items"] == {
        "type": "integer",
        "minimum": 1,
    }
    model = schemas["EvaluationListCreateApiInputRequest"]["properties"]["models"]["items"]
    assert model["required"] == ["provider"] and "echo" in model["properties"]["provider"]["enum"]

    def parameter(path, name):
        operation = document["paths"][path]["get"]
        return next(p["schema"] for p in operation["parameters"] if p["name"] == name)

    against = parameter("/api/v1/versions/{version_id}/diff/", "against")
    assert (against["minimum"], against["maximum"]) == (1, 2**63 - 1)
    for name in ("Last-Event-ID", "offset"):
        bound = parameter("/api/v1/runs/{run_id}/stream/", name)
        assert (bound["minimum"], bound["maximum"]) == (0, 10**12 - 1), name

    continued = document["paths"]["/api/v1/runs/{run_id}/continue/"]["post"]["responses"]
    assert {"200", "201"} <= set(continued)
    stream = document["paths"]["/api/v1/runs/{run_id}/stream/"]["get"]["responses"]["200"]
    events = stream["content"]["text/event-stream"]["x-sse-events"]
    assert events == {
        "token": {"$ref": "#/components/schemas/RunStreamToken"},
        "done": {"$ref": "#/components/schemas/Run"},
        "error": {"$ref": "#/components/schemas/ApiError"},
    }
    # Every error an operation may answer is documented on every operation.
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            missing = {"400", "401", "403", "404", "409", "413", "429", "503"} - set(
                operation["responses"]
            )
            assert not missing, (method, path, missing)


@pytest.mark.django_db
def test_an_against_outside_the_id_range_is_a_400_naming_it():
    from tests.factories import api_client_for, make_user
    from tests.playground.factories import make_prompt

    owner = make_user("owner")
    _, version = make_prompt(owner)
    client = api_client_for(owner)
    for bad in ("0", str(2**63)):
        response = client.get(f"/api/v1/versions/{version.pk}/diff/?against={bad}")
        assert response.status_code == 400, (bad, response.content)
        assert response.json()["field"] == "against"

"""The question bank API (questionbank/api.py): questions listed, filtered and read, and
GET /api/v1/questions/{slug}/estimate/ — the three estimators end to end, and every bad input."""

import pytest

from questionbank.estimators.batching import SIM_MAX_REQUESTS
from tests.factories import api_client_for, make_user
from tests.questionbank.test_seed import SLUGS

pytestmark = pytest.mark.django_db

URL = "/api/v1/questions/{}/estimate/"

BATCH = {"rate": "2000", "batch": "50", "latency_ms": "200", "fill": "1"}

CHECKPOINT = {"size_gb": "400", "bandwidth_gbps": "10", "hosts": "200", "fanout": "2"}

STORAGE = {
    "events_per_s": "100000",
    "bytes_per_event": "1000",
    "retention_days": "365",
    "replication": "3",
    "compression": "5",
}


@pytest.fixture
def api():
    return api_client_for(make_user())


def get(api, slug, params):
    return api.get(URL.format(slug), params)


BAD = [
    # (slug, base, field, raw value or None for missing, what the detail says)
    ("llm-inference-api", BATCH, "rate", None, "required"),
    ("llm-inference-api", BATCH, "rate", "lots", "not a number"),
    ("llm-inference-api", BATCH, "rate", "0", "must be positive"),
    ("llm-inference-api", BATCH, "rate", "-5", "must be positive"),
    ("llm-inference-api", BATCH, "rate", "nan", "finite"),
    ("llm-inference-api", BATCH, "rate", "inf", "finite"),
    ("llm-inference-api", BATCH, "rate", "-Infinity", "finite"),
    ("llm-inference-api", BATCH, "rate", "1e9", "must be"),
    ("llm-inference-api", BATCH, "rate", "9" * 400, "not a number"),
    ("llm-inference-api", BATCH, "batch", "2.5", "whole number"),
    ("llm-inference-api", BATCH, "batch", None, "required"),
    ("llm-inference-api", BATCH, "latency_ms", "0", "must be positive"),
    ("llm-inference-api", BATCH, "latency_ms", "", "required"),
    ("llm-inference-api", BATCH, "fill", "1.5", "≤ 1"),
    ("llm-inference-api", BATCH, "fill", "0", "must be positive"),
    ("llm-inference-api", BATCH, "fill", "0x10", "not a number"),
    ("llm-inference-api", BATCH, "timeout_ms", "-1", "must be positive"),
    ("llm-inference-api", BATCH, "timeout_ms", "1e12", "must be"),
    ("llm-inference-api", BATCH, "gpus", "0", "must be positive"),
    ("llm-inference-api", BATCH, "gpus", "100000", "must be"),
    ("llm-inference-api", BATCH, "requests", "1000000", "must be"),
    ("llm-inference-api", BATCH, "seed", "-1", "must not be negative"),
    ("checkpoint-distribution", CHECKPOINT, "size_gb", None, "required"),
    ("checkpoint-distribution", CHECKPOINT, "bandwidth_gbps", "ten", "not a number"),
    ("checkpoint-distribution", CHECKPOINT, "hosts", "0", "must be positive"),
    ("checkpoint-distribution", CHECKPOINT, "hosts", "1000001", "must be"),
    ("checkpoint-distribution", CHECKPOINT, "fanout", "1.5", "whole number"),
    ("checkpoint-distribution", CHECKPOINT, "chunk_mb", "NaN", "finite"),
    ("checkpoint-distribution", CHECKPOINT, "fail_fraction", "1", "must be"),
    ("checkpoint-distribution", CHECKPOINT, "fail_fraction", "-0.1", "must not be negative"),
    ("data-platform", STORAGE, "events_per_s", None, "required"),
    ("data-platform", STORAGE, "bytes_per_event", "1 KB", "not a number"),
    ("data-platform", STORAGE, "retention_days", "0", "must be positive"),
    ("data-platform", STORAGE, "replication", "0.5", "must be"),
    ("data-platform", STORAGE, "compression", "0.5", "must be"),
    ("data-platform", STORAGE, "compression", "inf", "finite"),
    ("data-platform", STORAGE, "hot_days", "-3", "must not be negative"),
]


def test_batch_closed_form(api):
    response = get(api, "llm-inference-api", BATCH)
    assert response.status_code == 200
    body = response.json()
    assert body["question"] == "llm-inference-api"
    assert body["per_gpu_rps"] == 250
    assert body["gpus"] == 8
    assert body["simulated"] is None
    assert body["inputs"] == {"rate": 2000, "batch": 50, "latency_ms": 200, "fill": 1}

    assert get(api, "llm-inference-api", {**BATCH, "fill": "0.5"}).json()["gpus"] == 16


def test_batch_simulation_is_deterministic(api):
    params = {**BATCH, "timeout_ms": "20", "gpus": "10", "requests": "5000"}
    first = get(api, "llm-inference-api", params).json()
    second = get(api, "llm-inference-api", params).json()
    assert first == second
    simulated = first["simulated"]
    assert set(simulated) >= {"mean_fill", "p50_ms", "p99_ms", "utilisation"}
    assert 0 < simulated["mean_fill"] <= 1
    assert 200 <= simulated["p50_ms"] <= simulated["p99_ms"]
    assert 0 < simulated["utilisation"] <= 1
    assert simulated["gpus"] == 10
    assert simulated["requests"] == 5000
    # Another seed draws other arrivals.
    other = get(api, "llm-inference-api", {**params, "seed": "3"}).json()["simulated"]
    assert other["p99_ms"] != simulated["p99_ms"] or other["mean_fill"] != simulated["mean_fill"]


def test_checkpoint(api):
    body = get(api, "checkpoint-distribution", CHECKPOINT).json()
    assert body["bandwidth_gb_per_s"] == 1.25
    assert body["lower_bound_s"] == 320
    assert body["naive_s"] == 64_000
    assert body["tree_levels"] == 7
    assert body["tree_s"] == 4_480
    assert body["simulated"]["completion_s"] >= 320
    assert body["simulated"]["hosts_failed"] == 0


def test_checkpoint_big_fleet_skips_the_simulation(api):
    body = get(api, "checkpoint-distribution", {**CHECKPOINT, "hosts": "20000"}).json()
    assert body["simulated"] is None
    assert "simulated for up to" in body["simulation_note"]
    assert body["naive_s"] == 20_000 * 320


def test_storage(api):
    body = get(api, "data-platform", {**STORAGE, "hot_days": "30", "warm_days": "90"}).json()
    assert body["raw_bytes_per_day"] == 8_640_000_000_000
    assert body["bytes_per_day"] == 1_728_000_000_000
    assert body["bytes_per_day_human"] == "1.73 TB"
    assert body["total_bytes"] == 1_728_000_000_000 * 365 * 3
    assert body["total_bytes_human"] == "1.89 PB"
    assert [(t["name"], t["days"]) for t in body["tiers"]] == [
        ("hot", 30),
        ("warm", 90),
        ("cold", 245),
    ]
    assert sum(t["bytes"] for t in body["tiers"]) == pytest.approx(body["total_bytes"])


@pytest.mark.parametrize("slug", ["review-design-doc", "ml-config", "no-such-question"])
def test_other_slugs_are_404_with_detail(api, slug):
    response = get(api, slug, BATCH)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert "No estimator" in response.json()["detail"]


def test_needs_credentials():
    response = api_client_for(None).get(URL.format("llm-inference-api"), BATCH)
    assert response.status_code in (401, 403)


@pytest.mark.parametrize(("slug", "base", "field", "raw", "says"), BAD)
def test_bad_input_is_400_naming_the_field(api, slug, base, field, raw, says):
    params = {k: v for k, v in base.items() if k != field}
    if raw is not None:
        params[field] = raw
    response = get(api, slug, params)
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["field"] == field
    assert body["detail"].startswith(f"{field}:")
    assert says in body["detail"]


def test_thousands_separators_are_accepted(api):
    body = get(api, "llm-inference-api", {**BATCH, "rate": "2,000"}).json()
    assert body["gpus"] == 8


def test_caps_keep_the_worst_request_bounded(api):
    """The largest inputs allowed still answer (and the simulated fleet is capped)."""
    params = {
        "rate": "1000000",
        "batch": "1",
        "latency_ms": "60000",
        "fill": "0.001",
        "timeout_ms": "60000",
        "requests": str(SIM_MAX_REQUESTS),
    }
    body = get(api, "llm-inference-api", params).json()
    assert body["gpus"] == 60_000_000_000
    assert body["simulated"]["gpus"] == 10_000
    big = {
        "size_gb": "1000000",
        "bandwidth_gbps": "0.001",
        "hosts": "500",
        "fanout": "1",
        "chunk_mb": "0.001",
        "fail_fraction": "0.9",
    }
    body = get(api, "checkpoint-distribution", big).json()
    assert body["tree_levels"] == 500
    assert body["simulated"]["chunks"] <= 400


def test_estimates_are_rate_limited_per_client(api, client, settings):
    from django.core.cache import cache

    cache.clear()
    settings.ESTIMATE_RATE_LIMIT = 3
    settings.ESTIMATE_ANON_RATE_LIMIT = 2  # a visitor not signed in gets the tighter cap
    for _ in range(3):
        assert get(api, "llm-inference-api", BATCH).status_code == 200
    limited = get(api, "llm-inference-api", BATCH)
    assert limited.status_code == 429
    assert "Too many estimates" in limited.json()["detail"]
    assert int(limited["Retry-After"]) >= 1
    # Another account has its own allowance; so does an anonymous page visitor.
    assert get(api_client_for(make_user()), "data-platform", {"x": "1"}).status_code == 400
    url = "/questions/llm-inference-api/estimate/"
    for _ in range(2):
        assert client.get(url, BATCH, HTTP_HX_REQUEST="true").status_code == 200
    page = client.get(url, BATCH, HTTP_HX_REQUEST="true")
    assert page.status_code == 429
    assert page["Retry-After"]
    cache.clear()


def test_anonymous_page_estimates_have_the_tighter_limit(client, settings):
    from django.core.cache import cache

    cache.clear()
    settings.ESTIMATE_RATE_LIMIT = 5
    settings.ESTIMATE_ANON_RATE_LIMIT = 1
    url = "/questions/llm-inference-api/estimate/"
    assert client.get(url, BATCH, HTTP_HX_REQUEST="true").status_code == 200
    limited = client.get(url, BATCH, HTTP_HX_REQUEST="true")
    assert limited.status_code == 429
    assert int(limited["Retry-After"]) >= 1
    assert "Too many estimates" in limited.content.decode()
    cache.clear()


def test_anonymous_page_simulation_past_the_cap_is_refused_naming_requests(client):
    url = "/questions/llm-inference-api/estimate/"
    params = {**BATCH, "timeout_ms": "0.001", "requests": "100000"}
    page = client.get(url, params)
    assert page.status_code == 400
    assert "requests" in page.content.decode()


def test_simulated_work_past_the_cap_is_a_400_naming_requests():
    client = api_client_for(make_user())
    params = {**BATCH, "timeout_ms": "0.001", "requests": str(SIM_MAX_REQUESTS + 1)}
    response = client.get(URL.format("llm-inference-api"), params)
    assert response.status_code == 400
    assert response.json()["field"] == "requests"
    assert response.json()["detail"].startswith("requests:")
    # the request: 100,000 requests with a tiny timeout
    response = client.get(URL.format("llm-inference-api"), {**params, "requests": "100000"})
    assert response.status_code == 400
    assert response.json()["field"] == "requests"


def test_api_list_and_filter():
    client = api_client_for(make_user())
    response = client.get("/api/v1/questions/")
    assert response.status_code == 200
    assert [q["slug"] for q in response.json()["results"]] == SLUGS

    response = client.get("/api/v1/questions/", {"kind": "design-review"})
    assert [q["slug"] for q in response.json()["results"]] == ["review-design-doc"]


def test_api_detail_has_every_section(django_assert_max_num_queries):
    client = api_client_for(make_user())
    with django_assert_max_num_queries(8):
        response = client.get("/api/v1/questions/checkpoint-distribution/")
    assert response.status_code == 200
    body = response.json()
    assert body["slug"] == "checkpoint-distribution"
    assert set(body) >= {"title", "round", "prompt", "depth_areas", "follow_ups", "numbers"}
    assert {"label", "inputs", "calculation", "result"} <= set(body["numbers"][0])
    assert {"probe", "look_for"} <= set(body["follow_ups"][0])


def test_api_unknown_slug_is_json_404():
    client = api_client_for(make_user())
    response = client.get("/api/v1/questions/no-such-question/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"detail": "Not found."}


def test_api_without_credentials_is_json_401_or_403():
    response = api_client_for(None).get("/api/v1/questions/")
    assert response.status_code in (401, 403)
    assert "detail" in response.json()

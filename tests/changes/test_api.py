"""Change requests through the HTTP API (issue #34): the gate on a label, the merge that checks
every rule in one service, overrides, access, private drafts, suggested edits and mentions."""

import pytest
from django.core import mail

from changes.models import ChangeNotice, ChangeRequest, SuggestedEdit
from evals.services import testsets
from playground.models import Label, LabelMove, PromptVersion, Role
from reviews.models import AnnotationAnchor, DesignDoc
from tests.changes.conftest import SYSTEM_V2

pytestmark = pytest.mark.django_db

ROWS = [
    {"variables": {"design": "a cache"}, "expected": "cache"},
    {"variables": {"design": "a queue"}, "expected": "queue"},
    {"variables": {"design": "a CDN"}, "expected": "nothing-here"},
]
GRADERS = [{"type": "contains"}]


def _url(world, tail: str = "") -> str:
    return f"/api/v1/changes/{world.request_id}/{tail}"


def _gate(world, **rules):
    body = {"required_approvals": 1, "no_blockers": True, **rules}
    answer = world.api["alice"].put(
        f"/api/v1/prompts/{world.prompt.pk}/labels/production/gate/", body, format="json"
    )
    assert answer.status_code == 200, answer.json()
    return answer.json()


def _review(world, who: str, verdict: str, annotations=()):
    api = world.api[who]
    started = api.post(_url(world, "reviews/"))
    assert started.status_code in (200, 201), started.json()
    review_id = started.json()["id"]
    made = []
    for note in annotations:
        answer = api.post(_url(world, f"reviews/{review_id}/annotations/"), note, format="json")
        assert answer.status_code == 201, answer.json()
        made.append(answer.json()["id"])
    submitted = api.post(
        _url(world, f"reviews/{review_id}/submit/"), {"verdict": verdict}, format="json"
    )
    assert submitted.status_code == 200, submitted.json()
    return review_id, made


def _evaluate(world, version):
    from evals.services.evaluations import evaluation_create, evaluation_dispatch

    revision = testsets.testset_create(
        actor=world.alice,
        prompt=world.prompt,
        role=Role.OWNER,
        name="smoke",
        rows=testsets.testset_rows_parse(ROWS),
    )
    evaluation = evaluation_create(
        actor=world.alice,
        prompt=world.prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[version.pk],
        graders=GRADERS,
    )
    evaluation_dispatch(evaluation_id=evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == "done"
    return revision.testset_id


def _failing(world) -> list[str]:
    gate = world.api["alice"].get(_url(world, "gate/")).json()
    return [rule["rule"] for rule in gate["rules"] if not rule["holds"]]


# --- the label guard --------------------------------------------------------------------------


def test_a_gated_label_refuses_a_direct_move_for_every_role(world):
    world.request_id = 0
    _gate(world)
    assert Label.objects.get(prompt=world.prompt, name="production").gated
    for who in ("alice", "erin"):
        api = world.api[who]
        moved = api.put(
            f"/api/v1/prompts/{world.prompt.pk}/labels/production/",
            {"version": world.v2.pk, "expected": world.v1.pk},
            format="json",
        )
        assert moved.status_code == 409, (who, moved.json())
        assert "gated" in moved.json()["detail"]
        assert "Request rules: 1 approval; no open blocker." in moved.json()["detail"]
        created = api.post(
            f"/api/v1/prompts/{world.prompt.pk}/labels/",
            {"name": "production", "version": world.v2.pk},
            format="json",
        )
        assert created.status_code == 409
    assert (
        world.api["bob"]
        .put(
            f"/api/v1/prompts/{world.prompt.pk}/labels/production/",
            {"version": world.v2.pk},
            format="json",
        )
        .status_code
        == 403
    )  # a viewer may not move labels at all
    assert Label.objects.get(prompt=world.prompt, name="production").version_id == world.v1.pk
    # The labels form answers the same 409.
    page = world.api["alice"]
    page.force_login(world.alice)
    form = page.post(
        f"/playground/p/{world.prompt.pk}/labels/",
        {"name": "production", "version": world.v2.pk, "expected": world.v1.pk},
        HTTP_HX_REQUEST="true",
    )
    assert form.status_code == 409
    assert "gated" in form.content.decode()


def test_only_the_owner_overrides_and_the_log_keeps_the_reason(world):
    world.request_id = 0
    _gate(world)
    url = f"/api/v1/prompts/{world.prompt.pk}/labels/production/"
    refused = world.api["erin"].put(
        url, {"version": world.v2.pk, "override": "hotfix"}, format="json"
    )
    assert refused.status_code == 403
    moved = world.api["alice"].put(
        url, {"version": world.v2.pk, "override": "Outage: roll forward now"}, format="json"
    )
    assert moved.status_code == 200, moved.json()
    assert moved.json()["gated"] is True
    move = LabelMove.objects.filter(label__name="production").order_by("-id").first()
    assert (move.to_version_id, move.override_reason, move.via) == (
        world.v2.pk,
        "Outage: roll forward now",
        "",
    )


def test_a_gated_main_does_not_follow_saves(world):
    from playground.services import label_protect_set
    from tests.playground.factories import save

    world.request_id = 0
    label_protect_set(actor=world.alice, prompt=world.prompt, name="main", protected=True)
    world.api["alice"].put(
        f"/api/v1/prompts/{world.prompt.pk}/labels/main/gate/", {}, format="json"
    )
    main = Label.objects.get(prompt=world.prompt, name="main")
    before = main.version_id
    result = save(world.alice, world.prompt, main.version, system="Something else.\n")
    assert result.created and not result.main_moved
    assert Label.objects.get(pk=main.pk).version_id == before


def test_gate_rules_are_the_owners_and_need_a_protected_label(world):
    world.request_id = 0
    url = f"/api/v1/prompts/{world.prompt.pk}/labels/production/gate/"
    assert world.api["erin"].put(url, {}, format="json").status_code == 403
    assert world.api["stranger"].get(url).status_code == 404
    main = world.api["alice"].put(
        f"/api/v1/prompts/{world.prompt.pk}/labels/main/gate/", {}, format="json"
    )
    assert main.status_code == 400 and main.json()["field"] == "label"
    bad = world.api["alice"].put(url, {"eval_threshold": 0.5}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "eval_testset"
    outsider = world.api["alice"].put(url, {"required_reviewers": ["stranger"]}, format="json")
    assert outsider.status_code == 400 and outsider.json()["field"] == "required_reviewers"
    _gate(world)
    unprotect = world.api["alice"].patch(
        f"/api/v1/prompts/{world.prompt.pk}/labels/production/", {"protected": False}, format="json"
    )
    assert unprotect.status_code == 400
    lifted = world.api["alice"].delete(url)
    assert lifted.status_code == 200 and lifted.json()["gated"] is False


# --- the merge and its rules ------------------------------------------------------------------


def test_merge_is_refused_while_each_rule_fails_and_moves_the_label_when_all_hold(opened):
    world = opened
    testset = _evaluate(world, world.v2)  # v2 passes 2 of 3 rows
    _review(world, "bob", "approve")
    _review(world, "carol", "approve")
    passing = {
        "required_approvals": 2,
        "required_reviewers": ["bob"],
        "eval_testset": testset,
        "eval_graders": GRADERS,
        "eval_threshold": 0.6,
    }
    _gate(world, **passing)
    assert _failing(world) == []

    def refused(rule: str, words: str) -> None:
        assert _failing(world) == [rule]
        answer = world.api["alice"].post(_url(world, "merge/"))
        assert answer.status_code == 409, answer.json()
        assert words in answer.json()["detail"]
        assert Label.objects.get(name="production").version_id == world.v1.pk

    _gate(world, **{**passing, "required_approvals": 3})
    refused("approvals", "Approvals: 2 of 3 required")
    _gate(world, **{**passing, "required_reviewers": ["bob", "dave"]})
    refused("reviewers", "dave has not approved")
    _gate(world, **{**passing, "eval_threshold": 0.9})
    refused("evaluation", "passed smoke at 67% at best; 90% is required")
    _gate(world, **{**passing, "eval_graders": [{"type": "equals"}]})
    refused("evaluation", "no finished evaluation of test set smoke with the required graders")
    _gate(world, **passing)
    _, (blocker,) = _review(
        world,
        "dave",
        "comment",
        [
            {
                "quote": {"exact": "Always name the riskiest component first."},
                "kind": "risk",
                "severity": "blocker",
                "body": "This will leak into every answer.",
            }
        ],
    )
    refused("no-blockers", "1 blocker annotation still open")
    resolved = world.api["alice"].patch(
        _url(world, f"annotations/{blocker}/"), {"status": "resolved"}, format="json"
    )
    assert resolved.status_code == 200
    # A viewer reads and comments but does not merge.
    assert world.api["bob"].post(_url(world, "merge/")).status_code == 403
    merged = world.api["erin"].post(_url(world, "merge/"))  # an editor merges when rules hold
    assert merged.status_code == 200, merged.json()
    assert merged.json()["status"] == "merged"
    assert merged.json()["merge"]["via"] == f"change request #{world.request_id}"
    label = Label.objects.get(prompt=world.prompt, name="production")
    assert label.version_id == world.v2.pk
    move = LabelMove.objects.get(pk=merged.json()["merge"]["move"])
    assert (move.from_version_id, move.to_version_id, move.actor_id) == (
        world.v1.pk,
        world.v2.pk,
        world.erin.pk,
    )
    again = world.api["alice"].post(_url(world, "merge/"))
    assert again.status_code == 409


def test_without_rules_one_approval_is_required_and_a_push_asks_again(opened):
    world = opened
    _gate(world)
    assert _failing(world) == ["approvals"]
    _review(world, "bob", "approve")
    assert _failing(world) == []
    from tests.playground.factories import save

    v3 = save(world.alice, world.prompt, world.v2, system=SYSTEM_V2 + "Be brief.\n").version
    pushed = world.api["alice"].post(
        _url(world, "push/"), {"version": f"v{v3.number}"}, format="json"
    )
    assert pushed.status_code == 201, pushed.json()
    assert pushed.json()["to_number"] == v3.number
    assert [r["number"] for r in pushed.json()["revisions"]] == [1, 2]
    assert _failing(world) == ["approvals"]  # bob approved the text before the push
    stale = world.api["alice"].post(_url(world, "push/"), {"version": "v1"}, format="json")
    assert stale.status_code == 400 and stale.json()["field"] == "version"
    assert (
        world.api["bob"].post(_url(world, "push/"), {"version": "v1"}, format="json").status_code
        == 403
    )


def test_a_label_moved_since_the_request_opened_makes_the_merge_a_conflict(opened):
    world = opened
    _gate(world, required_approvals=0, no_blockers=False)
    world.api["alice"].put(
        f"/api/v1/prompts/{world.prompt.pk}/labels/production/",
        {"version": world.v2.pk, "override": "manual"},
        format="json",
    )
    answer = world.api["alice"].post(_url(world, "merge/"))
    assert answer.status_code == 409
    assert ChangeRequest.objects.get(pk=world.request_id).status == "open"


# --- access -----------------------------------------------------------------------------------


def test_a_stranger_gets_404_on_every_request_url(opened):
    world = opened
    api = world.api["stranger"]
    review_id, (annotation,) = _review(
        world,
        "bob",
        "request-changes",
        [
            {
                "quote": {"exact": "Always name the riskiest component first."},
                "kind": "risk",
                "severity": "major",
                "body": "Too strong.",
                "suggestion": "Name the riskiest component first when there is one.",
            }
        ],
    )
    edit = SuggestedEdit.objects.get(annotation_id=annotation)
    gets = ["", "text/", "gate/", "reviews/", "annotations/"]
    posts = [
        "push/",
        "merge/",
        "close/",
        "reviews/",
        f"reviews/{review_id}/annotations/",
        f"reviews/{review_id}/submit/",
        f"annotations/{annotation}/replies/",
        "suggestions/accept/",
        f"suggestions/{edit.pk}/reject/",
    ]
    for tail in gets:
        assert api.get(_url(world, tail)).status_code == 404, tail
    for tail in posts:
        assert api.post(_url(world, tail), {}, format="json").status_code == 404, tail
    assert (
        api.patch(_url(world, f"annotations/{annotation}/"), {}, format="json").status_code == 404
    )
    assert api.get(f"/api/v1/prompts/{world.prompt.pk}/changes/").status_code == 404
    # The request's document is not the review desk's: 404 there for everyone, its author too.
    request = ChangeRequest.objects.get(pk=world.request_id)
    revision = request.doc.revisions.get(number=1)
    for who in ("alice", "bob"):
        desk = world.api[who]
        assert desk.get(f"/api/v1/docs/{request.doc_id}/").status_code == 404
        assert desk.get(f"/api/v1/revisions/{revision.pk}/").status_code == 404
        assert desk.get(f"/api/v1/reviews/{review_id}/").status_code == 404
        assert desk.get(f"/api/v1/annotations/{annotation}/").status_code == 404
        listed = desk.get("/api/v1/docs/").json()
        ids = [d["id"] for d in (listed["results"] if isinstance(listed, dict) else listed)]
        assert request.doc_id not in ids
    assert DesignDoc.objects.get(pk=request.doc_id).kind == "change"
    # A viewer reads and reviews but does not open requests.
    refused = world.api["bob"].post(
        f"/api/v1/prompts/{world.prompt.pk}/changes/",
        {"label": "production", "to": "v2"},
        format="json",
    )
    assert refused.status_code == 403


def test_drafts_stay_private_until_submitted(opened):
    world = opened
    bob = world.api["bob"]
    review_id = bob.post(_url(world, "reviews/")).json()["id"]
    note = {
        "quote": {"exact": "Answer in short paragraphs."},
        "kind": "question",
        "severity": "minor",
        "body": "Why short?",
    }
    assert (
        bob.post(_url(world, f"reviews/{review_id}/annotations/"), note, format="json").status_code
        == 201
    )
    for who in ("alice", "carol"):
        other = world.api[who]
        assert other.get(_url(world, "annotations/")).json() == []
        assert [r["id"] for r in other.get(_url(world, "reviews/")).json()] == []
        assert (
            other.post(
                _url(world, f"reviews/{review_id}/annotations/"), note, format="json"
            ).status_code
            == 404
        )
    assert len(bob.get(_url(world, "annotations/")).json()) == 1
    bob.post(_url(world, f"reviews/{review_id}/submit/"), {"verdict": "comment"}, format="json")
    assert len(world.api["carol"].get(_url(world, "annotations/")).json()) == 1
    assert [r["status"] for r in world.api["alice"].get(_url(world, "reviews/")).json()] == [
        "submitted"
    ]


# --- suggested edits --------------------------------------------------------------------------


def test_accepting_a_suggestion_saves_a_child_version_and_reanchors_the_rest(
    opened, django_capture_on_commit_callbacks
):
    world = opened
    _, (risk, question) = _review(
        world,
        "bob",
        "request-changes",
        [
            {
                "quote": {"exact": "Always name the riskiest component first."},
                "kind": "risk",
                "severity": "major",
                "body": "Too absolute.",
                "suggestion": "Name the riskiest component first when there is one.",
            },
            {
                "quote": {"exact": "Review this design: {{design}}"},
                "kind": "question",
                "severity": "minor",
                "body": "Should the design be quoted?",
            },
        ],
    )
    listed = world.api["alice"].get(_url(world, "annotations/")).json()
    edit_id = next(a["suggestion"]["id"] for a in listed if a["id"] == risk)
    assert (
        world.api["bob"]
        .post(_url(world, "suggestions/accept/"), {"ids": [edit_id]}, format="json")
        .status_code
        == 403
    )  # only the request's author applies suggestions
    with django_capture_on_commit_callbacks(execute=True):
        accepted = world.api["alice"].post(
            _url(world, "suggestions/accept/"), {"ids": [edit_id]}, format="json"
        )
    assert accepted.status_code == 201, accepted.json()
    child = PromptVersion.objects.get(pk=accepted.json()["version"])
    assert child.parent_id == world.v2.pk
    from playground.selectors import version_content

    assert version_content(version=child)["system"] == SYSTEM_V2.replace(
        "Always name the riskiest component first.",
        "Name the riskiest component first when there is one.",
    )
    detail = world.api["alice"].get(_url(world)).json()
    assert detail["to_version"] == child.pk and len(detail["revisions"]) == 2
    after = {a["id"]: a for a in world.api["bob"].get(_url(world, "annotations/")).json()}
    assert after[question]["anchor"]["status"] == AnnotationAnchor.Status.EXACT
    text = world.api["bob"].get(_url(world, "text/")).json()["text"]
    start, end = after[question]["anchor"]["start"], after[question]["anchor"]["end"]
    assert text[start:end] == "Review this design: {{design}}"
    assert after[risk]["suggestion"]["status"] == "accepted"
    assert after[risk]["status"] == "resolved"
    again = world.api["alice"].post(
        _url(world, "suggestions/accept/"), {"ids": [edit_id]}, format="json"
    )
    assert again.status_code == 400


def test_a_suggestion_across_two_fields_is_refused_and_rejecting_keeps_the_thread(opened):
    world = opened
    bob = world.api["bob"]
    review_id = bob.post(_url(world, "reviews/")).json()["id"]
    text = bob.get(_url(world, "text/")).json()["text"]
    start = text.index("component first.")
    end = text.index("Review this design")
    across = bob.post(
        _url(world, f"reviews/{review_id}/annotations/"),
        {
            "position": {"start": start, "end": end + 6},
            "kind": "risk",
            "severity": "minor",
            "body": "Merge these.",
            "suggestion": "x",
        },
        format="json",
    )
    assert across.status_code == 400 and across.json()["field"] == "suggestion"
    _, (note,) = _review(
        world,
        "bob",
        "request-changes",
        [
            {
                "quote": {"exact": "Answer in short paragraphs."},
                "kind": "alternative",
                "severity": "minor",
                "body": "Bullets read faster.",
                "tradeoff": "Less nuance.",
                "suggestion": "Answer in bullet points.",
            }
        ],
    )
    edit = SuggestedEdit.objects.get(annotation_id=note)
    rejected = world.api["alice"].post(_url(world, f"suggestions/{edit.pk}/reject/"))
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    replied = world.api["alice"].post(
        _url(world, f"annotations/{note}/replies/"), {"body": "Paragraphs stay."}, format="json"
    )
    assert replied.status_code == 201
    (listed,) = world.api["bob"].get(_url(world, "annotations/")).json()
    assert listed["status"] == "open" and [r["body"] for r in listed["replies"]] == [
        "Paragraphs stay."
    ]


# --- inbox and mentions -----------------------------------------------------------------------


def test_requested_reviewers_see_it_in_their_inbox_and_mentions_notify(
    opened, django_capture_on_commit_callbacks
):
    world = opened
    for who in ("bob", "carol"):
        (notice,) = world.api[who].get("/api/v1/changes/inbox/").json()
        assert (notice["kind"], notice["request"], notice["actor"]) == (
            "review-requested",
            world.request_id,
            "alice",
        )
    assert world.api["dave"].get("/api/v1/changes/inbox/").json() == []
    _, (note,) = _review(
        world,
        "bob",
        "comment",
        [
            {
                "quote": {"exact": "Answer in short paragraphs."},
                "kind": "question",
                "severity": "nit",
                "body": "Short?",
            }
        ],
    )
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):  # mail leaves after the commit
        with_mention = world.api["alice"].post(
            _url(world, f"annotations/{note}/replies/"),
            {"body": "@carol what do you think? (cc @stranger, @nobody)"},
            format="json",
        )
    assert with_mention.status_code == 201
    kinds = [n["kind"] for n in world.api["carol"].get("/api/v1/changes/inbox/").json()]
    assert kinds == ["mention", "review-requested"]
    assert not ChangeNotice.objects.filter(recipient=world.stranger).exists()
    assert [m.to for m in mail.outbox] == [["carol@example.com"]]
    assert "@carol what do you think?" in mail.outbox[0].body
    assert [n["kind"] for n in world.api["alice"].get("/api/v1/changes/inbox/").json()] == [
        "review-submitted"
    ]


def test_a_suggestion_on_the_model_and_parameters_is_refused(opened):
    world = opened
    bob = world.api["bob"]
    review_id = bob.post(_url(world, "reviews/")).json()["id"]
    answer = bob.post(
        _url(world, f"reviews/{review_id}/annotations/"),
        {
            "quote": {"exact": '"model": "echo-1"'},
            "kind": "risk",
            "severity": "minor",
            "body": "Use a bigger model.",
            "suggestion": '"model": "echo-2"',
        },
        format="json",
    )
    assert answer.status_code == 400 and "model and parameters" in answer.json()["detail"]


def test_a_reviewer_may_approve_after_commenting_on_the_same_revision(opened):
    world = opened
    _gate(world)
    _review(world, "bob", "comment")
    assert _failing(world) == ["approvals"]
    _review(world, "bob", "approve")  # a new attempt on the same revision
    assert _failing(world) == []
    verdicts = [
        (r["reviewer"], r["verdict"])
        for r in world.api["alice"].get(_url(world, "reviews/")).json()
    ]
    assert sorted(verdicts) == [("bob", "approve"), ("bob", "comment")]
    own = world.api["alice"].post(_url(world, "reviews/")).json()["id"]
    refused = world.api["alice"].post(
        _url(world, f"reviews/{own}/submit/"), {"verdict": "approve"}, format="json"
    )
    assert refused.status_code == 400 and refused.json()["field"] == "verdict"
    closed = world.api["bob"].post(_url(world, "close/"))
    assert closed.status_code == 403
    closed = world.api["alice"].post(_url(world, "close/"))
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    assert world.api["alice"].post(_url(world, "merge/")).status_code == 409


def test_lists_and_texts_refuse_bad_parameters(opened):
    world = opened
    api = world.api["bob"]
    listed = api.get(f"/api/v1/prompts/{world.prompt.pk}/changes/?status=open").json()
    assert [r["id"] for r in listed] == [world.request_id]
    assert api.get(f"/api/v1/prompts/{world.prompt.pk}/changes/?status=merged").json() == []
    bad = api.get(f"/api/v1/prompts/{world.prompt.pk}/changes/?status=nope")
    assert bad.status_code == 400 and bad.json()["field"] == "status"
    assert api.get(_url(world, "text/?r=1")).json()["revision"] == 1
    assert api.get(_url(world, "text/?r=9")).status_code == 400

import pytest

from playground.exceptions import ContentInvalid, LabelConflict, VersionImmutable
from playground.models import Label, LabelMove, PromptVersion
from playground.selectors import version_content
from playground.services import label_move, prompt_version_revert
from playground.text.content import content_hash, content_validate
from tests.factories import make_user
from tests.playground.factories import content, make_prompt, save

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


def test_create_makes_root_and_main(owner):
    prompt, root = make_prompt(owner)
    assert root.parent is None
    assert root.number == 1
    assert Label.objects.get(prompt=prompt, name="main").version == root
    assert version_content(version=root) == content_validate(content())
    assert root.content_hash == content_hash(content_validate(content()))


def test_save_is_a_child_and_main_follows(owner):
    prompt, root = make_prompt(owner)
    result = save(owner, prompt, root, system="Changed.")
    assert result.created
    assert result.main_moved
    assert result.version.parent == root
    assert result.version.number == 2
    assert Label.objects.get(prompt=prompt, name="main").version == result.version
    assert LabelMove.objects.filter(label__prompt=prompt).count() == 2


def test_identical_content_under_same_parent_returns_existing(owner):
    prompt, root = make_prompt(owner)
    first = save(owner, prompt, root, system="Same.")
    again = save(owner, prompt, root, system="Same.")
    assert not again.created
    assert again.version == first.version
    assert PromptVersion.objects.filter(prompt=prompt).count() == 2


def test_two_saves_from_one_parent_make_siblings_and_main_stays_on_first(owner):
    prompt, root = make_prompt(owner)
    a = save(owner, prompt, root, system="A")
    b = save(owner, prompt, root, system="B")
    assert a.version.parent == b.version.parent == root
    assert a.main_moved
    assert not b.main_moved  # b branched: main had moved on to a
    assert Label.objects.get(prompt=prompt, name="main").version == a.version


def test_versions_are_immutable(owner):
    prompt, root = make_prompt(owner)
    root.message = "rewritten"
    with pytest.raises(VersionImmutable):
        root.save()
    with pytest.raises(VersionImmutable):
        PromptVersion.objects.filter(pk=root.pk).update(message="x")
    with pytest.raises(VersionImmutable):
        root.delete()
    with pytest.raises(VersionImmutable):
        PromptVersion.objects.filter(pk=root.pk).delete()
    root.refresh_from_db()
    assert root.message == "First version"


def test_revert_creates_new_version_with_old_content(owner):
    prompt, root = make_prompt(owner)
    v2 = save(owner, prompt, root, system="Second").version
    v3 = save(owner, prompt, v2, system="Third").version
    result = prompt_version_revert(actor=owner, prompt=prompt, target=root, parent=v3)
    assert result.created
    assert result.version.parent == v3
    assert result.version.content_hash == root.content_hash
    assert version_content(version=result.version) == version_content(version=root)
    assert result.version.message == "Revert to v1"


def test_large_prompt_small_edit_is_stored_as_delta(owner):
    from textstore.selectors import blob_stat

    big = "".join(f"Line {i}: the quick brown fox jumps over the lazy dog.\n" for i in range(5000))
    prompt, root = make_prompt(owner, system=big)
    child = save(owner, prompt, root, system=big.replace("Line 2500:", "Line 2500 (edited):"))
    stat = blob_stat(sha=child.version.system_sha)
    assert stat.kind == "delta"


def test_parent_from_another_prompt_is_rejected(owner):
    prompt, root = make_prompt(owner)
    other, other_root = make_prompt(owner, title="Other")
    with pytest.raises(ContentInvalid) as error:
        save(owner, prompt, other_root)
    assert error.value.field == "parent"
    assert PromptVersion.objects.filter(prompt=prompt).count() == 1


def test_label_compare_and_set(owner):
    prompt, root = make_prompt(owner)
    v2 = save(owner, prompt, root, system="2").version
    label = label_move(
        actor=owner,
        prompt=prompt,
        name="production",
        version=root,
        expected=None,
        expected_given=True,
    )
    assert label.protected
    assert label.version == root
    with pytest.raises(LabelConflict):
        label_move(
            actor=owner,
            prompt=prompt,
            name="production",
            version=v2,
            expected=v2,
            expected_given=True,
        )
    label = label_move(
        actor=owner,
        prompt=prompt,
        name="production",
        version=v2,
        expected=root,
        expected_given=True,
    )
    assert label.version == v2
    # A replay of the same move is a no-op, not a conflict.
    label_move(
        actor=owner, prompt=prompt, name="production", version=v2, expected=v2, expected_given=True
    )
    moves = LabelMove.objects.filter(label=label).order_by("id")
    assert [(m.from_version_id, m.to_version_id) for m in moves] == [
        (None, root.pk),
        (root.pk, v2.pk),
    ]


def test_admin_has_no_update_path_for_versions(owner, client):
    from django.contrib.auth import get_user_model

    prompt, root = make_prompt(owner)
    admin = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw-admin-123")
    client.force_login(admin)
    url = f"/admin/playground/promptversion/{root.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200  # viewable…
    assert b'name="_save"' not in page.content  # …but no save button
    assert client.post(url, {"message": "edited"}).status_code == 403
    assert (
        client.post(
            f"/admin/playground/promptversion/{root.pk}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    assert client.get("/admin/playground/promptversion/add/").status_code == 403
    root.refresh_from_db()
    assert root.message == "First version"

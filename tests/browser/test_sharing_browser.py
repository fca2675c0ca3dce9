import pytest

from playground.models import AccessGrant, ShareLink
from playground.services import prompt_create
from tests.browser.test_playground_browser import login
from tests.conftest import wait_for_quiet_network
from tests.factories import make_user
from tests.playground.factories import content

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_public_link_then_revoke(new_page, artifacts_dir):
    owner = make_user("olga")
    prompt, _ = prompt_create(
        actor=owner, title="Shared critic", content=content(system="Share me.")
    )
    page = new_page()
    login(page, "olga")
    page.goto(f"/playground/p/{prompt.pk}/")
    page.get_by_role("button", name="Share").click()
    dialog = page.locator("#share-dialog")
    dialog.get_by_label("Who can open the link").select_option("public")
    dialog.get_by_role("button", name="Create link").click()
    url = dialog.get_by_label("New share link").input_value()
    assert "/s/rl_" in url
    dialog.screenshot(path=artifacts_dir / "share-dialog.png")
    assert ShareLink.objects.count() == 1
    assert url.split("/s/")[1] not in ShareLink.objects.get().token_hash

    anonymous = new_page()
    anonymous.goto(url)
    assert anonymous.locator("h1").inner_text().startswith("Shared critic")
    assert "Share me." in anonymous.content()
    anonymous.screenshot(path=artifacts_dir / "shared-page.png", full_page=True)

    page.once("dialog", lambda d: d.accept())  # hx-confirm
    dialog.get_by_role("button", name="Revoke").click()
    dialog.locator(".status-revoked").wait_for()
    response = anonymous.reload()
    assert response is not None and response.status == 410  # it ended; nothing else is said
    assert anonymous.locator("h1").inner_text() == "This link was revoked"
    assert "Share me." not in anonymous.content()
    anonymous.screenshot(path=artifacts_dir / "revoked-link.png")


def test_grant_between_two_accounts_then_revoke(new_page, artifacts_dir):
    owner = make_user("olga")
    make_user("bob")
    prompt, _ = prompt_create(actor=owner, title="Team prompt", content=content(system="For Bob."))
    page = new_page()
    login(page, "olga")
    page.goto(f"/playground/p/{prompt.pk}/")
    page.get_by_role("button", name="Share").click()
    dialog = page.locator("#share-dialog")
    dialog.get_by_label("Username to share with").fill("bob")
    dialog.get_by_label("Role").select_option("viewer")
    dialog.get_by_role("button", name="Share").click()
    dialog.locator(".grant-row[data-user='bob']").wait_for()
    assert AccessGrant.objects.filter(user__username="bob", revoked_at__isnull=True).count() == 1

    bob = new_page()
    login(bob, "bob")
    bob.goto("/playground/")
    bob.get_by_role("link", name="Team prompt").click()
    bob.wait_for_url(f"**/playground/p/{prompt.pk}/")
    bob.wait_for_load_state()
    assert "For Bob." in bob.content()
    assert bob.get_by_role("button", name="Save version").count() == 0
    bob.screenshot(path=artifacts_dir / "grantee-view.png", full_page=True)

    page.once("dialog", lambda d: d.accept())
    dialog.locator(".grant-row[data-user='bob']").get_by_role("button", name="Revoke").click()
    dialog.locator(".grant-row").first.wait_for(state="detached")
    bob.reload()
    assert bob.locator("h1").inner_text() == "Not found"
    assert "For Bob." not in bob.content()


def test_pinned_link_hides_its_parents_secret_and_copy_works(new_page, artifacts_dir):
    """The owner removed a key before sharing v2: nothing of v1 reaches the visitor's browser,
    and "Copy to my prompts" (a CSRF-protected form) works from the shared page."""
    from playground.services import prompt_version_create, share_link_create

    owner = make_user("olga")
    make_user("bob")
    secret = "sk-SECRET-do-not-share-4242"
    prompt, root = prompt_create(
        actor=owner, title="Support bot", content=content(system=f"Use key {secret}.")
    )
    v2 = prompt_version_create(
        actor=owner,
        prompt=prompt,
        parent=root,
        content=content(system="Use the key from the environment."),
        message="remove the key",
    ).version
    _, token = share_link_create(actor=owner, prompt=prompt, access="public", version=v2)

    bob = new_page()
    login(bob, "bob")
    bodies: list[str] = []

    def keep(response) -> None:
        try:
            bodies.append(response.text())
        except Exception:  # redirects and aborted responses have no body
            bodies.append("")

    bob.on("response", keep)
    bob.goto(f"/s/{token}")
    wait_for_quiet_network(bob)
    assert "Use the key from the environment." in bob.content()
    assert secret not in bob.content()
    assert bodies and all(secret not in body for body in bodies)
    bob.screenshot(path=artifacts_dir / "shared-pinned.png", full_page=True)

    bob.get_by_role("button", name="Copy to my prompts").click()
    bob.wait_for_url("**/playground/p/*/")
    assert "Copied into your prompts." in bob.locator(".messages").inner_text()
    assert bob.locator("h1").inner_text().startswith("Copy of Support bot")
    assert secret not in bob.content()
    bob.screenshot(path=artifacts_dir / "copied.png", full_page=True)

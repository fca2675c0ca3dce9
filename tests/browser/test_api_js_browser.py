"""static/js/api.js in real Chromium (issue #35): Redline.api() against the live server (JSON,
an HTML page as text, a write carrying the CSRF token, the server's `detail` and a 429's
Retry-After on the thrown ApiError) and Redline.poll()'s schedule (back-off, Retry-After,
done, abort)."""

import pytest

from tests.browser.test_reviews_browser import login
from tests.factories import make_user
from tests.playground.factories import make_prompt

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The outcome of one call, as data: what the page's scripts read off an answer or an error.
CALL = """async ([url, options]) => {
  try {
    const value = await window.Redline.api(url, options);
    return { ok: true, value: value };
  } catch (error) {
    return {
      ok: false, isApiError: error instanceof window.Redline.ApiError, name: error.name,
      message: error.message, status: error.status, detail: error.detail,
      retryAfter: error.retryAfter,
    };
  }
}"""


def test_api_answers_json_text_and_errors_with_the_servers_detail(page, settings):
    settings.SHARE_GUESS_LIMIT = 1
    ada = make_user("ada")
    _, version = make_prompt(ada)
    login(page, "ada")

    got = page.evaluate(CALL, [f"/api/v1/versions/{version.pk}/", {}])
    assert got["ok"] and got["value"]["id"] == version.pk

    got = page.evaluate(CALL, ["/", {"as": "text"}])
    assert got["ok"] and "</html>" in got["value"]

    got = page.evaluate(CALL, ["/api/v1/versions/999999/", {}])
    assert got == {
        "ok": False, "isApiError": True, "name": "ApiError", "message": "Not found.",
        "status": 404, "detail": "Not found.", "retryAfter": None,
    }  # fmt: skip

    # A write: the session's CSRF token goes along (without it the answer would be a 403), so
    # the server gets to validate the body and answers 400 with its detail.
    got = page.evaluate(CALL, ["/api/v1/uploads/", {"method": "POST", "json": {"size": -1}}])
    assert not got["ok"] and got["status"] == 400, got
    assert got["message"] == got["detail"] and "CSRF" not in got["detail"]

    # Guessing share links past the limit: a 429 whose Retry-After the error carries.
    statuses = []
    for _ in range(3):
        got = page.evaluate(CALL, ["/api/v1/shared/no-such-token/", {}])
        statuses.append(got["status"])
        if got["status"] == 429:
            break
    assert statuses[-1] == 429, statuses
    assert got["message"] == "Too many invalid links from this address; try again later."
    assert got["retryAfter"] > 0


def test_poll_backs_off_honours_retry_after_and_stops(page):
    make_user("ada")
    login(page, "ada")
    # The delays poll() asks of setTimeout, recorded (each then runs at once): the schedule
    # itself, with no clock in the assertion.
    result = page.evaluate(
        """async () => {
      const asked = [];
      const realTimeout = window.setTimeout;
      window.setTimeout = function (callback, ms) { asked.push(ms); return realTimeout(callback, 0); };
      try {
        let steps = 0;
        const done = await window.Redline.poll(function () {
          steps += 1;
          if (steps <= 3) throw new Error("the server did not answer");
          if (steps === 4) return Promise.reject(Object.assign(new Error("429"), { retryAfter: 1 }));
          return steps === 6;
        }, { delay: 10, maxDelay: 40 });
        const schedule = asked.splice(0);

        const controller = new AbortController();
        let afterAbort = 0;
        const aborted = await window.Redline.poll(function () {
          afterAbort += 1;
          if (afterAbort === 2) controller.abort();
          return false;
        }, { delay: 10, first: 1000, signal: controller.signal });
        return { done: done, steps: steps, schedule: schedule, aborted: aborted,
                 afterAbort: afterAbort, abortSchedule: asked };
      } finally {
        window.setTimeout = realTimeout;
      }
    }"""
    )
    # First step at once; three failures double the wait up to maxDelay; a Retry-After of 1 s
    # wins over the back-off; a success goes back to the delay; the sixth step says done.
    assert result["done"] is True and result["steps"] == 6
    assert result["schedule"] == [0, 20, 40, 40, 1000, 10]
    assert result["aborted"] is False and result["afterAbort"] == 2
    assert result["abortSchedule"] == [1000, 10, 10]

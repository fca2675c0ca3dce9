// "Draft with a prompt" on the review page (critique/, docs/critique.md): start a draft through
// the JSON API, then follow it by polling its suggestions fragment, appending each suggestion as
// the model's reply completes it. Accept (with the edit form's values) or reject through the API;
// after an accept the page reloads so the new annotation shows in the margin and the document.
(function () {
  "use strict";

  const panel = document.getElementById("draft-panel");
  if (!panel || panel.dataset.bound) return;
  panel.dataset.bound = "1";
  const list = document.getElementById("suggestion-list");
  const statusLine = document.getElementById("draft-status");
  const formError = document.getElementById("draft-error");
  const suggestionError = document.getElementById("suggestion-error");
  const startButton = document.getElementById("draft-start");
  const POLL_MS = 200;

  function post(url, payload) {
    return window.Redline.api(url, { method: "POST", json: payload || {} });
  }

  function fill(template, id) {
    return template.replace("/0/", "/" + id + "/");
  }

  function lastPosition() {
    const items = list.querySelectorAll("[data-position]");
    return items.length ? Number(items[items.length - 1].dataset.position) : -1;
  }

  // Follows the draft until it is neither queued nor running; a failed poll is tried again later.
  function follow(url) {
    window.Redline.poll(function () {
      return window.Redline.api(url + "?after=" + lastPosition(), { as: "text" }).then(function (html) {
        const holder = document.createElement("div");
        holder.innerHTML = html;
        const root = holder.firstElementChild;
        root.querySelectorAll("[data-items] > li").forEach(function (item) {
          if (!document.getElementById(item.id)) list.appendChild(item);
        });
        statusLine.textContent = root.querySelector("[data-status-text]").textContent.trim();
        const status = root.dataset.status;
        if (status === "queued" || status === "running") return false;
        startButton.disabled = false;
        return true;
      });
    }, { delay: POLL_MS, maxDelay: POLL_MS * 25 });
  }

  document.getElementById("draft-form").addEventListener("submit", function (event) {
    event.preventDefault();
    formError.hidden = true;
    const version = document.getElementById("draft-version").value;
    const provider = document.getElementById("draft-provider").value;
    const payload = {};
    if (version) payload.version = Number(version);
    if (provider) payload.provider = provider;
    startButton.disabled = true;
    post(panel.dataset.draftsUrl, payload)
      .then(function (body) {
        list.innerHTML = "";
        statusLine.textContent = "Drafting…";
        follow(fill(panel.dataset.fragmentTemplate, body.id));
      })
      .catch(function (error) {
        formError.textContent = error.message;
        formError.hidden = false;
        startButton.disabled = false;
      });
  });

  function edits(form) {
    const details = form.querySelector("details");
    if (!details || !details.open) return {};
    const out = {};
    ["body", "severity", "area", "kind", "tradeoff"].forEach(function (name) {
      const field = form.elements[name];
      if (field) out[name] = field.value;
    });
    return out;
  }

  list.addEventListener("click", function (event) {
    const button = event.target.closest("[data-accept], [data-reject]");
    if (!button) return;
    const item = button.closest("[data-suggestion-id]");
    const id = item.dataset.suggestionId;
    suggestionError.hidden = true;
    button.disabled = true;
    const accepting = button.hasAttribute("data-accept");
    const url = fill(accepting ? panel.dataset.acceptTemplate : panel.dataset.rejectTemplate, id);
    post(url, accepting ? edits(button.closest("form")) : {})
      .then(function () {
        if (accepting) {
          window.location.reload();
          return;
        }
        item.classList.remove("suggestion-pending");
        item.classList.add("suggestion-rejected");
        const form = item.querySelector("form");
        if (form) form.remove();
      })
      .catch(function (error) {
        suggestionError.textContent = error.message;
        suggestionError.hidden = false;
        button.disabled = false;
      });
  });

  const status = panel.dataset.status;
  if (panel.dataset.fragmentUrl && (status === "queued" || status === "running")) {
    startButton.disabled = true;
    follow(panel.dataset.fragmentUrl);
  }
})();

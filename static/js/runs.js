// Runs: start a run from the Run panel, stream its tokens over server-sent events, cancel it,
// and compare two runs side by side. Cards are rendered by the server; this module only
// appends streamed text to a card's output and swaps in the server's card when the run ends.
// Without EventSource (or when the stream cannot be opened) a card falls back to htmx polling.
(function () {
  "use strict";

  const FINISHED = ["done", "failed", "cancelled"];

  function withId(template, id) {
    return template.replace("/0/", "/" + encodeURIComponent(id) + "/");
  }

  function newKey() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    return String(Date.now()) + "-" + String(Math.random()).slice(2);
  }

  function postJson(url, body) {
    return window.Redline.api(url, { method: "POST", json: body || {} });
  }

  async function cardHtml(url) {
    try {
      return await window.Redline.api(url, { as: "text" });
    } catch (error) {
      if (error instanceof window.Redline.ApiError) throw new Error("Could not load the run (" + error.status + ").");
      throw error;
    }
  }

  // Replace `card` with the server's current card for that run; returns the new element.
  async function refreshCard(card, poll) {
    const url = card.dataset.cardUrl + (poll ? "?poll=1" : "");
    const holder = document.createElement("div");
    holder.innerHTML = (await cardHtml(url)).trim();
    const fresh = holder.firstElementChild;
    card.replaceWith(fresh);
    if (window.htmx) window.htmx.process(fresh);
    return fresh;
  }

  function finished(card) {
    return FINISHED.indexOf(card.dataset.status) !== -1;
  }

  function announceFinished(card) {
    document.body.dispatchEvent(new CustomEvent("run-finished", { detail: { runId: card.dataset.runId, status: card.dataset.status } }));
  }

  // Poll the card with htmx until the run ends (the fallback when SSE is not available).
  function pollCard(card) {
    refreshCard(card, true).catch(function () { /* the next poll tries again */ });
  }

  // Stream the run of `card`; resolves with the final card element.
  function streamCard(card) {
    return new Promise(function (resolve) {
      if (finished(card)) {
        resolve(card);
        return;
      }
      const runId = card.dataset.runId;
      function fallBack() {
        document.body.addEventListener("run-finished", function listener(event) {
          if (event.detail.runId !== runId) return;
          document.body.removeEventListener("run-finished", listener);
          resolve(document.getElementById("run-card-" + runId) || card);
        });
        pollCard(card);
      }
      if (!window.EventSource) {
        fallBack();
        return;
      }
      const output = card.querySelector("[data-run-output]");
      const badge = card.querySelector("[data-run-status]");
      const source = new EventSource(card.dataset.streamUrl);
      let gotAnything = false;
      source.addEventListener("token", function (event) {
        gotAnything = true;
        const data = JSON.parse(event.data);
        output.textContent += data.text;
        if (card.dataset.status !== "running") {
          card.dataset.status = "running";
          card.classList.add("run-streaming");
          if (badge) badge.textContent = "Running";
        }
      });
      source.addEventListener("done", function () {
        gotAnything = true;
        source.close();
        refreshCard(card, false).then(function (fresh) {
          announceFinished(fresh);
          resolve(fresh);
        }, function () {
          resolve(card);
        });
      });
      source.addEventListener("error", function () {
        // EventSource reconnects by itself (resuming from the last id) unless it gave up.
        if (source.readyState === EventSource.CLOSED || !gotAnything) {
          source.close();
          fallBack();
        }
      });
    });
  }

  // Cancel buttons (through the API, so a viewer's missing right is a readable message).
  document.addEventListener("submit", function (event) {
    const form = event.target.closest("form[data-run-cancel]");
    if (!form) return;
    const card = form.closest("[data-run-card]");
    const panel = document.querySelector("[data-cancel-url]");
    if (!card || !panel) return;
    event.preventDefault();
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    postJson(withId(panel.dataset.cancelUrl, card.dataset.runId)).catch(function (error) {
      if (button) button.disabled = false;
      window.alert(error.message);
    });
  });

  // When htmx polling swaps in a finished card, say so once (history refresh, compare diff).
  const announced = new Set();
  document.body.addEventListener("htmx:afterSettle", function () {
    document.querySelectorAll("[data-run-card]").forEach(function (card) {
      if (finished(card) && card.dataset.polled && !announced.has(card.dataset.runId)) {
        announced.add(card.dataset.runId);
        announceFinished(card);
      }
    });
  });

  function variablesOf(form, declared) {
    const values = {};
    form.querySelectorAll("[data-variable]").forEach(function (field) {
      const name = field.dataset.variable;
      if (!declared || declared.indexOf(name) !== -1) values[name] = field.value;
    });
    return values;
  }

  function submitOnCtrlEnter(form) {
    form.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
  }

  // POST a run, show its card, stream it; `onCard` is called once the card is on the page.
  async function startRun(runsUrl, body, slot, cardTemplate, onCard) {
    const run = await postJson(runsUrl, Object.assign({ idempotency_key: newKey() }, body));
    slot.innerHTML = await cardHtml(withId(cardTemplate, run.id));
    const card = slot.querySelector("[data-run-card]");
    if (onCard) onCard(card);
    return streamCard(card);
  }

  // --- the Run panel on the version page ----------------------------------------------------
  const panel = document.getElementById("run-panel");
  const runForm = document.getElementById("run-form");
  if (panel && runForm && !runForm.dataset.ready) {
    runForm.dataset.ready = "true";
    submitOnCtrlEnter(runForm);
    const status = document.getElementById("run-form-status");
    const button = document.getElementById("run-start");
    const slot = document.getElementById("run-current");
    runForm.addEventListener("submit", function (event) {
      event.preventDefault();
      button.disabled = true;
      status.textContent = "Starting…";
      status.classList.remove("run-form-error");
      const shown = function () {
        status.textContent = "";
        button.disabled = false;
      };
      startRun(panel.dataset.runsUrl, { variables: variablesOf(runForm, null) }, slot, panel.dataset.cardUrl, shown)
        .catch(function (error) {
          status.textContent = error.message;
          status.classList.add("run-form-error");
        })
        .finally(function () { button.disabled = false; });
    });
  }

  // --- unfinished cards already on the page (a run's page, a compare permalink) ---------------
  document.querySelectorAll("[data-run-card]").forEach(function (card) {
    if (!finished(card)) streamCard(card);
  });

  // --- compare ---------------------------------------------------------------------------------
  const compare = document.getElementById("compare-form");
  if (compare && !compare.dataset.ready) {
    compare.dataset.ready = "true";
    submitOnCtrlEnter(compare);
    const status = document.getElementById("compare-status");
    const button = document.getElementById("compare-run");
    const diffSlot = document.getElementById("compare-diff-slot");
    // Another version on a side has other variables: reload the form for the new pair.
    compare.querySelectorAll('select[name="a"], select[name="b"]').forEach(function (select) {
      select.addEventListener("change", function () {
        const params = new URLSearchParams();
        params.set("a", compare.querySelector('select[name="a"]').value);
        params.set("b", compare.querySelector('select[name="b"]').value);
        window.location.search = params.toString();
      });
    });
    compare.addEventListener("submit", function (event) {
      event.preventDefault();
      button.disabled = true;
      status.textContent = "Running both…";
      diffSlot.innerHTML = "";
      const sides = Array.from(compare.querySelectorAll("[data-side]"));
      const ids = {};
      const runs = sides.map(function (side) {
        const key = side.dataset.side;
        const declared = side.dataset.declared ? side.dataset.declared.split(",") : [];
        const select = side.querySelector('select[name="' + key + '"]');
        const version = select.options[select.selectedIndex].dataset.id;
        const slot = document.querySelector('[data-slot="' + key + '"]');
        const body = {
          variables: variablesOf(compare, declared),
          provider: side.querySelector('select[name="provider_' + key + '"]').value,
          model: side.querySelector('input[name="model_' + key + '"]').value,
        };
        return startRun(withId(compare.dataset.runsUrl, version), body, slot, compare.dataset.cardUrl).then(function (card) {
          ids[key] = card.dataset.runId;
          return card;
        });
      });
      Promise.all(runs)
        .then(function () {
          const params = new URLSearchParams(window.location.search);
          params.set("a", compare.querySelector('select[name="a"]').value);
          params.set("b", compare.querySelector('select[name="b"]').value);
          params.set("run_a", ids.a);
          params.set("run_b", ids.b);
          window.history.replaceState(null, "", "?" + params.toString());
          return cardHtml(compare.dataset.diffUrl + "?run_a=" + ids.a + "&run_b=" + ids.b);
        })
        .then(function (html) {
          diffSlot.innerHTML = html;
          status.textContent = "Both runs finished.";
        })
        .catch(function (error) { status.textContent = error.message; })
        .finally(function () { button.disabled = false; });
    });
  }
})();

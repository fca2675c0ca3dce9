// Unsaved edits in the prompt editor are never lost without a word. Leaving the page (closing
// the tab, reloading, typing an address) asks through the browser's own `beforeunload` prompt;
// following a link or a GET form on the page (a version in the tree, a label, Compare A → B)
// opens the "unsaved changes" dialog instead: Save, Discard (and go), or Stay.
(function () {
  "use strict";
  const form = document.getElementById("editor-form");
  const dialog = document.getElementById("unsaved-dialog");
  if (!form || !dialog) return;

  // What the form would save, as text: a chosen file counts by its name and size.
  function snapshot() {
    const parts = [];
    new FormData(form).forEach(function (value, name) {
      if (name === "csrfmiddlewaretoken") return;
      if (value instanceof File) value = value.name ? "file:" + value.name + ":" + value.size : "";
      parts.push(name + "=" + value);
    });
    return parts.join("\u0000");
  }

  const initial = snapshot();
  let leaving = false; // set by a save or a "Discard": the page may go without asking
  let resume = null; // what "Discard" does: follow the link or send the form

  function dirty() {
    return !leaving && snapshot() !== initial;
  }

  form.addEventListener("submit", function () { leaving = true; });
  // A save held back (invalid JSON, an upload cancelled) leaves the user editing again.
  form.addEventListener("input", function () { leaving = false; });

  window.addEventListener("beforeunload", function (event) {
    if (!dirty()) return;
    event.preventDefault();
    event.returnValue = ""; // older Chromium shows its prompt only when this is set
  });

  function ask(then) {
    resume = then;
    dialog.showModal();
    dialog.querySelector("[data-unsaved=stay]").focus();
  }

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    const link = event.target.closest("a[href]");
    if (!link || link.target === "_blank" || link.hasAttribute("download")) return;
    if (dialog.contains(link)) return;
    const url = new URL(link.href, location.href);
    if (url.origin !== location.origin) return;
    if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
    if (!dirty()) return;
    event.preventDefault();
    ask(function () { location.assign(url.href); });
  }, true);

  document.addEventListener("submit", function (event) {
    const other = event.target;
    if (other === form || event.defaultPrevented) return;
    if ((other.getAttribute("method") || "get").toLowerCase() !== "get") return;
    if (other.hasAttribute("hx-get") || !dirty()) return;
    event.preventDefault();
    ask(function () { other.submit(); });
  }, true);

  dialog.addEventListener("click", function (event) {
    const button = event.target.closest("[data-unsaved]");
    if (!button) return;
    const choice = button.dataset.unsaved;
    dialog.close();
    if (choice === "save") {
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    } else if (choice === "discard" && resume) {
      leaving = true;
      resume();
    } else {
      const field = form.querySelector("textarea, input[type=text]");
      if (field) field.focus();
    }
  });
})();

// Prompt editor: add/remove/reorder rows, JSON checks as you type, Ctrl/Cmd+S to save.
(function () {
  "use strict";
  const form = document.getElementById("editor-form");
  if (!form) return;

  function addRow(listId, templateId) {
    const list = document.getElementById(listId);
    const template = document.getElementById(templateId);
    const row = template.content.firstElementChild.cloneNode(true);
    list.appendChild(row);
    const focusable = row.querySelector("textarea, input");
    if (focusable) focusable.focus();
  }

  form.addEventListener("click", function (event) {
    const button = event.target.closest("[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    const row = button.closest("li");
    if (action === "add-message") addRow("message-list", "message-template");
    else if (action === "add-variable") addRow("variable-list", "variable-template");
    else if (action === "remove" && row) row.remove();
    else if (action === "up" && row && row.previousElementSibling) {
      row.parentNode.insertBefore(row, row.previousElementSibling);
      button.focus();
    } else if (action === "down" && row && row.nextElementSibling) {
      row.parentNode.insertBefore(row.nextElementSibling, row);
      button.focus();
    }
  });

  function checkJson(textarea) {
    const out = textarea.parentNode.querySelector(".json-error");
    const text = textarea.value.trim();
    let message = "";
    if (text) {
      try {
        const value = JSON.parse(text);
        if (textarea.dataset.json === "list" && !Array.isArray(value)) message = "Must be a JSON list.";
        if (textarea.dataset.json === "object" && (value === null || Array.isArray(value) || typeof value !== "object")) message = "Must be a JSON object.";
      } catch (error) {
        message = "Invalid JSON: " + error.message;
      }
    }
    textarea.setCustomValidity(message);
    textarea.classList.toggle("invalid", Boolean(message));
    if (out) out.textContent = message;
    return !message;
  }
  form.querySelectorAll("textarea[data-json]").forEach(function (textarea) {
    textarea.addEventListener("input", function () { checkJson(textarea); });
  });

  form.addEventListener("submit", function (event) {
    let ok = true;
    form.querySelectorAll("textarea[data-json]").forEach(function (t) { ok = checkJson(t) && ok; });
    if (!ok) {
      event.preventDefault();
      form.querySelector("textarea.invalid").focus();
    }
  });

  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
      event.preventDefault();
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    }
  });

  // Another provider: its default model replaces the old provider's (echo-1 is no Claude).
  const provider = form.querySelector("select[name=provider]");
  const model = form.querySelector("input[name=model]");
  const modelNote = document.getElementById("model-note");
  if (provider && model) {
    provider.addEventListener("change", function () {
      const chosen = provider.options[provider.selectedIndex];
      if (!chosen.dataset.model || model.value === chosen.dataset.model) return;
      model.value = chosen.dataset.model;
      if (modelNote) modelNote.textContent = "Model set to " + chosen.dataset.model + ", " + chosen.value + "'s default; change it if you need another.";
    });
  }

  // An error from the server names a field: put the cursor there.
  const error = form.querySelector(".form-errors[data-field]");
  if (error && error.dataset.field) {
    const name = error.dataset.field.split(".")[0];
    const target = form.querySelector('[name="' + name + '"]') || form.querySelector("#" + name);
    if (target) target.focus();
  }
})();

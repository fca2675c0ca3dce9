// Export panel: the selected version as an API call, loaded from the export API when the panel
// opens. Tabs pick the API and the format (arrow keys, Home and End move between them); Copy
// writes the text to the clipboard; Download fetches the same URL as a file. The panel needs
// nothing but the export URL of one version, so it works for anyone who may read that version.
(function () {
  "use strict";
  const panel = document.getElementById("export-panel");
  if (!panel || panel.dataset.ready) return;
  panel.dataset.ready = "true";

  const url = panel.dataset.exportUrl;
  const codePanel = document.getElementById("export-code-panel");
  const code = document.getElementById("export-code");
  const filename = document.getElementById("export-filename");
  const status = document.getElementById("export-status");
  const copyButton = document.getElementById("export-copy");
  const download = document.getElementById("export-download");
  const keep = document.getElementById("export-keep-variables");
  const note = document.getElementById("export-note");
  const warningBox = document.getElementById("export-warnings");
  const warningList = document.getElementById("export-warning-list");
  const cutNote = document.getElementById("export-cut");
  const tablists = Array.from(panel.querySelectorAll('[role="tablist"]'));
  const STORE = "redline.export";

  // Format, placeholders and open/closed are remembered across pages; the API tab starts on the
  // version's own provider when it is one of the two, else on the last one used.
  const saved = recall();
  const provider = panel.dataset.provider;
  const state = {
    api: provider === "anthropic" || provider === "openai" ? provider : saved.api || "anthropic",
    format: saved.format || "curl",
    keep: Boolean(saved.keep) && !keep.disabled,
  };
  const cache = new Map(); // query -> {text, filename, ...}: switching back is instant
  let wanted = null; // the query whose export should be on screen
  let shown = null; // the export on screen

  function recall() {
    try {
      return JSON.parse(window.localStorage.getItem(STORE) || "{}") || {};
    } catch {
      return {};
    }
  }

  function remember() {
    try {
      // A version without variables cannot keep any: leave the remembered choice alone there.
      const keepChoice = keep.disabled ? Boolean(saved.keep) : state.keep;
      const value = { api: state.api, format: state.format, keep: keepChoice, open: panel.open };
      window.localStorage.setItem(STORE, JSON.stringify(value));
    } catch {
      // Storage may be off (private mode); the choices then last for this page only.
    }
  }

  function query() {
    const params = new URLSearchParams({ api: state.api, format: state.format });
    if (state.keep) params.set("variables", "keep");
    return params.toString();
  }

  function tabFor(list, value) {
    return list.querySelector('[role="tab"][data-value="' + value + '"]');
  }

  function render() {
    tablists.forEach(function (list) {
      const value = state[list.dataset.param];
      list.querySelectorAll('[role="tab"]').forEach(function (tab) {
        const selected = tab.dataset.value === value;
        tab.setAttribute("aria-selected", selected ? "true" : "false");
        tab.tabIndex = selected ? 0 : -1;
      });
    });
    codePanel.setAttribute(
      "aria-labelledby",
      tablists.map(function (list) { return tabFor(list, state[list.dataset.param]).id; }).join(" ")
    );
    keep.checked = state.keep;
    if (note.dataset.noVariables === "true") note.textContent = "This version has no variables.";
    else if (state.keep && state.format === "curl") {
      note.textContent = "curl always sends the variables' defaults.";
    } else note.textContent = "";
    // The download is the whole export, streamed by the server, whatever the panel shows.
    download.href = url + "?" + query() + "&full=1";
  }

  // Warnings say why the call would fail (undeclared variables, a model the API does not
  // serve); the export itself is shown exactly as it would be sent.
  function warn(warnings) {
    warningList.replaceChildren();
    (warnings || []).forEach(function (text) {
      const item = document.createElement("li");
      item.textContent = text;
      warningList.appendChild(item);
    });
    warningBox.hidden = !warningList.children.length;
  }

  function show(data) {
    shown = data;
    warn(data.warnings);
    code.textContent = data.text;
    filename.textContent = data.filename;
    download.setAttribute("download", data.filename);
    codePanel.removeAttribute("aria-busy");
    codePanel.classList.remove("export-failed");
    status.textContent = "";
    // A long version's export is cut to heads: copying it would copy a call that is not the
    // version's, so Copy waits for a whole export and the note points at the download.
    cutNote.hidden = !data.truncated;
    copyButton.disabled = Boolean(data.truncated);
  }

  function fail(message) {
    shown = null;
    warn([]);
    code.textContent = "";
    filename.textContent = "";
    codePanel.removeAttribute("aria-busy");
    codePanel.classList.add("export-failed");
    cutNote.hidden = true;
    status.textContent = "Could not load the export: " + message;
    copyButton.disabled = true;
  }

  function load() {
    const key = query();
    if (key === wanted && (shown || codePanel.getAttribute("aria-busy"))) return;
    wanted = key;
    if (cache.has(key)) {
      show(cache.get(key));
      return;
    }
    codePanel.setAttribute("aria-busy", "true");
    status.textContent = "Loading…";
    copyButton.disabled = true;
    window.Redline.api(url + "?" + key + "&as=json")
      .then(function (body) {
        cache.set(key, body);
        if (wanted === key) show(body);
      })
      .catch(function (error) {
        if (wanted === key) fail(error.message);
      });
  }

  function update() {
    render();
    remember();
    if (panel.open) load();
  }

  // Tabs: click, or arrow keys / Home / End with automatic activation.
  tablists.forEach(function (list) {
    const tabs = Array.from(list.querySelectorAll('[role="tab"]'));
    list.addEventListener("click", function (event) {
      const tab = event.target.closest('[role="tab"]');
      if (!tab) return;
      state[list.dataset.param] = tab.dataset.value;
      update();
    });
    list.addEventListener("keydown", function (event) {
      const index = tabs.indexOf(document.activeElement);
      if (index < 0) return;
      let next = null;
      if (event.key === "ArrowRight" || event.key === "ArrowDown") next = (index + 1) % tabs.length;
      else if (event.key === "ArrowLeft" || event.key === "ArrowUp") {
        next = (index - 1 + tabs.length) % tabs.length;
      } else if (event.key === "Home") next = 0;
      else if (event.key === "End") next = tabs.length - 1;
      if (next === null) return;
      event.preventDefault();
      state[list.dataset.param] = tabs[next].dataset.value;
      update();
      tabs[next].focus();
    });
  });

  keep.addEventListener("change", function () {
    state.keep = keep.checked;
    update();
  });

  panel.addEventListener("toggle", function () {
    remember();
    if (panel.open) load();
  });

  // Copy: the async Clipboard API where the page may use it, else a hidden textarea and
  // execCommand (older browsers, plain-HTTP hosts other than localhost).
  function copyWithTextarea(text) {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.top = "-1000px";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return copyWithTextarea(text); });
    }
    return copyWithTextarea(text);
  }

  let copiedTimer = null;
  copyButton.addEventListener("click", function () {
    if (!shown) return;
    copy(shown.text).then(
      function () {
        copyButton.textContent = "Copied";
        copyButton.classList.add("copied");
        window.clearTimeout(copiedTimer);
        copiedTimer = window.setTimeout(function () {
          copyButton.textContent = "Copy";
          copyButton.classList.remove("copied");
        }, 2000);
      },
      function () {
        // Leave the text selected so Ctrl/Cmd+C still works.
        window.getSelection().selectAllChildren(code);
        status.textContent = "Copying was blocked: press Ctrl/Cmd+C.";
      }
    );
  });

  render();
  if (saved.open) panel.open = true; // fires "toggle", which loads
})();

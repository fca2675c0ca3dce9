// Large-text mode of the prompt editor. A text longer than the upload threshold, or a file chosen
// with "Replace with file", is not posted with the form: it is hashed with Web Crypto (SHA-256),
// an upload is created (POST /api/v1/uploads/), the bytes are PUT to the URL it gives with a
// progress bar and a Cancel button, and only then is the form submitted, naming the upload
// ({"upload": id}) in the field's hidden *_ref input. The server checks size, hash and UTF-8
// itself. Cancelled or failed: the form is restored and nothing is saved.
(function () {
  "use strict";
  const form = document.getElementById("editor-form");
  const panel = document.getElementById("upload-status");
  if (!form || !panel) return;
  const threshold = parseInt(panel.dataset.uploadThreshold, 10) || 262144;
  const uploadsUrl = panel.dataset.uploadsUrl || "/api/v1/uploads/";
  const progress = document.getElementById("upload-progress");
  const percent = document.getElementById("upload-percent");
  const label = document.getElementById("upload-label");
  const cancelButton = document.getElementById("upload-cancel");
  const message = document.getElementById("upload-message");
  const encoder = new TextEncoder();
  let current = null; // the XMLHttpRequest in flight
  let cancelled = false;
  let busy = false;

  class Cancelled extends Error {}

  function fieldLabel(box) {
    if (box.dataset.textField === "system") return "the system prompt";
    const rows = Array.from(form.querySelectorAll('[data-text-field="message"]'));
    return "message " + (rows.indexOf(box) + 1);
  }

  function formatSize(bytes) {
    if (bytes >= 1048576) return (bytes / 1048576).toFixed(1) + " MB";
    if (bytes >= 1024) return (bytes / 1024).toFixed(1) + " KB";
    return bytes + " bytes";
  }

  function say(text, kind) {
    message.textContent = text;
    message.classList.toggle("upload-error", kind === "error");
  }

  // The texts to upload: a chosen file, or a textarea whose UTF-8 is over the threshold.
  function jobs() {
    const list = [];
    form.querySelectorAll("[data-text-field]").forEach(function (box) {
      const file = box.querySelector("input[type=file][data-file]");
      const textarea = box.querySelector("textarea[data-text]");
      if (file && file.files.length) {
        list.push({ box: box, blob: file.files[0] });
      } else if (textarea) {
        const bytes = encoder.encode(textarea.value.replace(/\r\n/g, "\n"));
        if (bytes.length > threshold) list.push({ box: box, blob: new Blob([bytes]) });
      }
    });
    return list;
  }

  function show(name, fraction) {
    const value = Math.max(0, Math.min(100, Math.round(fraction * 100)));
    progress.value = value;
    percent.textContent = value + "%";
    label.textContent = "Uploading " + name;
  }

  async function sha256Hex(blob) {
    const digest = await crypto.subtle.digest("SHA-256", await blob.arrayBuffer());
    return Array.from(new Uint8Array(digest), function (b) {
      return b.toString(16).padStart(2, "0");
    }).join("");
  }

  function createUpload(size, sha256) {
    return window.Redline.api(uploadsUrl, { method: "POST", json: { size: size, sha256: sha256 } });
  }

  function put(ticket, blob, name) {
    return new Promise(function (resolve, reject) {
      const xhr = new XMLHttpRequest();
      current = xhr;
      xhr.open(ticket.method || "PUT", ticket.url);
      Object.entries(ticket.headers || {}).forEach(function (entry) {
        // Browsers set Content-Length themselves and refuse to be told.
        if (entry[0].toLowerCase() !== "content-length") xhr.setRequestHeader(entry[0], entry[1]);
      });
      xhr.upload.addEventListener("progress", function (event) {
        if (event.lengthComputable) show(name, event.loaded / event.total);
      });
      xhr.addEventListener("load", function () {
        current = null;
        if (xhr.status >= 200 && xhr.status < 300) {
          show(name, 1);
          resolve();
          return;
        }
        let detail = "the upload was refused (" + xhr.status + ")";
        try { detail = JSON.parse(xhr.responseText).detail || detail; } catch { /* not JSON */ }
        reject(new Error(detail));
      });
      xhr.addEventListener("error", function () {
        current = null;
        reject(new Error("the connection failed"));
      });
      xhr.addEventListener("abort", function () {
        current = null;
        reject(new Cancelled("cancelled"));
      });
      xhr.send(blob);
    });
  }

  // Field changes made for the submit, undone if the upload does not finish.
  const undo = [];

  function useUpload(box, uploadId) {
    const ref = box.querySelector("input[data-ref]");
    const previous = ref.value;
    ref.value = JSON.stringify({ upload: uploadId });
    undo.push(function () { ref.value = previous; });
    const textarea = box.querySelector("textarea[data-text]");
    if (textarea) {
      // The text goes by upload, not in the form: post an empty field in its place.
      const name = textarea.name;
      textarea.removeAttribute("name");
      const blank = document.createElement("input");
      blank.type = "hidden";
      blank.name = name;
      blank.value = "";
      textarea.after(blank);
      undo.push(function () { textarea.name = name; blank.remove(); });
    }
  }

  function restore() {
    while (undo.length) undo.pop()();
  }

  function finish() {
    busy = false;
    panel.hidden = true;
    form.removeAttribute("aria-busy");
  }

  async function run(list) {
    busy = true;
    cancelled = false;
    form.setAttribute("aria-busy", "true");
    panel.hidden = false;
    progress.value = 0;
    percent.textContent = "0%";
    cancelButton.focus();
    try {
      for (const job of list) {
        const name = fieldLabel(job.box);
        label.textContent = "Checking " + name + " (" + formatSize(job.blob.size) + ")";
        say("Computing the SHA-256 of " + name + "…");
        const sha = await sha256Hex(job.blob);
        if (cancelled) throw new Cancelled("cancelled");
        const ticket = await createUpload(job.blob.size, sha);
        if (cancelled) throw new Cancelled("cancelled");
        say("Uploading " + name + " (" + formatSize(job.blob.size) + ")…");
        await put(ticket, job.blob, name);
        useUpload(job.box, ticket.id);
      }
    } catch (error) {
      restore();
      finish();
      if (error instanceof Cancelled) {
        say("Upload cancelled. Nothing was saved; your edits are still here.", "error");
      } else {
        const reason = String(error.message || "unknown error").replace(/\.+$/, "");
        say("Upload failed: " + reason + ". Nothing was saved; your edits are still here.", "error");
      }
      const submit = form.querySelector("button[type=submit]");
      if (submit) submit.focus();
      return;
    }
    say("Upload finished. Saving the version…");
    form.submit(); // native submit: does not run this handler again
  }

  form.addEventListener("submit", function (event) {
    if (busy) {
      event.preventDefault();
      return;
    }
    if (event.defaultPrevented) return; // the editor's own checks failed
    const list = jobs();
    if (!list.length) return;
    event.preventDefault();
    if (!window.crypto || !window.crypto.subtle) {
      say("This browser cannot hash files here (Web Crypto needs HTTPS). Nothing was saved.", "error");
      return;
    }
    run(list);
  });

  cancelButton.addEventListener("click", function () {
    cancelled = true;
    if (current) current.abort();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && busy) {
      cancelled = true;
      if (current) current.abort();
    }
  });

  // A chosen file takes the text's place at once: the old text is hidden (kept, to undo) and a
  // note where it was says what will be saved, with a button to keep the current text.
  function showReplacement(box, file) {
    const current = box.querySelector("textarea[data-text], .large-text");
    let note = box.querySelector(".replace-note");
    if (!file) {
      if (note) note.remove();
      if (current) current.hidden = false;
      return;
    }
    if (!note) {
      note = document.createElement("div");
      note.className = "replace-note";
      note.setAttribute("role", "status");
      const text = document.createElement("p");
      const keep = document.createElement("button");
      keep.type = "button";
      keep.className = "button button-small button-secondary";
      keep.textContent = "Keep the current text";
      keep.addEventListener("click", function () {
        const input = box.querySelector("input[type=file][data-file]");
        input.value = "";
        showReplacement(box, null);
        say("");
        if (current) current.focus();
      });
      note.append(text, keep);
      box.querySelector(".replace-file").before(note);
    }
    note.querySelector("p").textContent =
      "Replaced by " + file.name + " (" + formatSize(file.size) + ") when you save; the current text is set aside until then.";
    if (current) current.hidden = true;
  }

  form.addEventListener("change", function (event) {
    const input = event.target;
    if (!input.matches || !input.matches("input[type=file][data-file]")) return;
    const box = input.closest("[data-text-field]");
    if (input.files.length) {
      const file = input.files[0];
      showReplacement(box, file);
      say("On save, " + fieldLabel(box) + " will be replaced by " + file.name + " (" + formatSize(file.size) + "), uploaded first.");
    } else {
      showReplacement(box, null);
      say("");
    }
  });
})();

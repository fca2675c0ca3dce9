// Review page: turn a selection into Markdown source offsets, annotate, rank risks, change
// issue status, re-attach orphans. Talks to the JSON API (/api/v1/...) with the session.
//
// The server wraps every run of text that is verbatim in the Markdown source in
// <span data-s="OFFSET"> (escapes and entities also carry data-l, their source length), in the
// rendered view and in the source view alike. A point in the page maps to
// data-s + the characters before it inside that span, so selection offsets are exact; the
// server checks them against the quote again.
(function () {
  "use strict";

  const app = document.getElementById("review-app");
  if (!app) return;
  const rendered = document.getElementById("doc-rendered");
  const sourceView = document.getElementById("doc-source");
  // Offsets are in Unicode code points (Python str indices), not UTF-16 units as in JS
  // strings: the two differ after any character outside the BMP (emoji).
  const source = Array.from(sourceView.textContent);
  const roots = [rendered, sourceView];
  const canEdit = app.dataset.canEdit === "1";
  let captured = null; // {start, end}: the last passage selected in the document

  function api(method, url, payload) {
    return window.Redline.api(url, { method: method, json: payload });
  }

  function showError(element, message) {
    if (!element) return;
    element.textContent = message;
    element.hidden = !message;
  }

  function reloadAt(hash) {
    history.replaceState(null, "", window.location.pathname + window.location.search + (hash || ""));
    window.location.reload();
  }

  // --- selection → source offsets ---------------------------------------------------------

  function spanOf(node) {
    const parent = node.parentElement;
    return parent ? parent.closest("[data-s]") : null;
  }

  function codePoints(text) {
    return Array.from(text).length;
  }

  function sourceOffset(textNode, offset) {
    const span = spanOf(textNode);
    const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);
    let before = "";
    let node;
    while ((node = walker.nextNode()) && node !== textNode) before += node.data;
    const within = codePoints(before + textNode.data.slice(0, offset));
    const start = parseInt(span.dataset.s, 10);
    if (span.dataset.l) return within > 0 ? start + parseInt(span.dataset.l, 10) : start;
    return start + within;
  }

  // The source span a DOM range covers: from the first mapped text node it touches to the
  // last, trimmed of surrounding whitespace. Null if it touches no document text.
  function rangeToSource(range, root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        return spanOf(node) && range.intersectsNode(node)
          ? NodeFilter.FILTER_ACCEPT
          : NodeFilter.FILTER_SKIP;
      },
    });
    let first = null;
    let last = null;
    let node;
    while ((node = walker.nextNode())) {
      if (!first) first = node;
      last = node;
    }
    if (!first) return null;
    const startOffset = first === range.startContainer ? range.startOffset : 0;
    const endOffset = last === range.endContainer ? range.endOffset : last.data.length;
    let start = sourceOffset(first, startOffset);
    let end = sourceOffset(last, endOffset);
    // A selection that starts or ends at the edge of a text run takes the emphasis or code
    // markers around it, so the quote stays balanced (`code`, **bold**).
    if (atSpanEdge(first, startOffset, "start")) {
      while (start > 0 && MARKERS.indexOf(source[start - 1]) !== -1) start--;
    }
    if (atSpanEdge(last, endOffset, "end")) {
      while (end < source.length && MARKERS.indexOf(source[end]) !== -1) end++;
    }
    while (start < end && /\s/.test(source[start])) start++;
    while (end > start && /\s/.test(source[end - 1])) end--;
    return end > start ? { start: start, end: end } : null;
  }

  const MARKERS = "`*_~";

  function atSpanEdge(textNode, offset, edge) {
    const span = spanOf(textNode);
    if (span === sourceView.firstElementChild || span.dataset.l) return false;
    const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);
    let before = 0;
    let total = 0;
    let node;
    while ((node = walker.nextNode())) {
      if (node === textNode) before = total;
      total += node.data.length;
    }
    return edge === "start" ? before + offset === 0 : before + offset === total;
  }

  const preview = document.getElementById("selection-preview");
  const reattachButtons = document.querySelectorAll("[data-reattach]");

  function renderPreview() {
    const whole = document.getElementById("whole-document");
    if (preview) {
      if (whole && whole.checked) {
        preview.textContent = "About the whole document.";
        preview.classList.remove("has-selection");
      } else if (captured) {
        let quote = source.slice(captured.start, captured.end).join("").replace(/\s+/g, " ");
        if (quote.length > 160) quote = quote.slice(0, 157) + "…";
        preview.textContent = "“" + quote + "”";
        preview.classList.add("has-selection");
        preview.dataset.start = captured.start;
        preview.dataset.end = captured.end;
      } else {
        preview.textContent = preview.dataset.empty;
        preview.classList.remove("has-selection");
      }
    }
    reattachButtons.forEach(function (button) { button.disabled = !captured; });
  }

  document.addEventListener("selectionchange", function () {
    const selection = document.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
    const range = selection.getRangeAt(0);
    const root = roots.find(function (r) { return r.contains(range.commonAncestorContainer); });
    if (!root) return;
    const span = rangeToSource(range, root);
    if (!span) return;
    captured = span;
    selectedRange = range.cloneRange();
    const whole = document.getElementById("whole-document");
    if (whole) whole.checked = false;
    // A passage is selected now: a "Select a passage first" error no longer applies.
    showError(document.getElementById("annotate-error"), "");
    renderPreview();
    // A drag is still under way until the pointer comes up; keyboard and script selections
    // (and a phone's selection handles) are done as they change.
    if (!pointerDown) formOpenNear(selectedRange);
  });

  // --- the comment form next to the selection -------------------------------------------------
  // The form lives at the top of the margin. A passage selected far down the document opens it
  // beside the passage instead: a popover in the margin column level with the selection on
  // two-column layouts, a sheet along the bottom of the screen on one-column (phone) layouts,
  // with the passage scrolled clear of it. "Close" or Escape puts it back in the margin.

  let selectedRange = null;
  let pointerDown = false;
  const layout = app;
  const margin = app.querySelector(".margin");
  const oneColumn = window.matchMedia("(max-width: 960px)");
  // What opens beside a selection: the comment form on the reviewed revision; on a later one,
  // the orphans list when it has "Re-attach to selection" buttons for this reader.
  const annotateForm = document.getElementById("annotate-form")
    || (reattachButtons.length ? document.querySelector(".orphans-panel") : null);
  const away = annotateForm && document.getElementById(annotateForm.dataset.floatAway);
  const closeButton = annotateForm && annotateForm.querySelector("[data-float-close]");

  document.addEventListener("pointerdown", function (event) {
    pointerDown = !(annotateForm && annotateForm.contains(event.target));
  });
  document.addEventListener("pointerup", function () {
    if (!pointerDown) return;
    pointerDown = false;
    const selection = document.getSelection();
    if (selectedRange && selection && !selection.isCollapsed) formOpenNear(selectedRange);
  });

  function formClose(restoreFocus) {
    if (!annotateForm || !annotateForm.classList.contains("annotate-floating")) return;
    annotateForm.classList.remove("annotate-floating", "annotate-popover", "annotate-sheet");
    ["top", "left", "width"].forEach(function (property) { annotateForm.style[property] = ""; });
    if (away) away.hidden = true;
    if (closeButton) closeButton.hidden = true;
    if (restoreFocus) {
      const first = annotateForm.querySelector("textarea, button:not([hidden]):not(:disabled)");
      if (first) first.focus();
    }
  }
  function formOpenNear(range) {
    if (!annotateForm || !margin) return;
    const box = range.getBoundingClientRect();
    if (!box.height && !box.width) return;
    annotateForm.classList.add("annotate-floating");
    if (away) away.hidden = false;
    if (closeButton) closeButton.hidden = false;
    if (oneColumn.matches) {
      annotateForm.classList.remove("annotate-popover");
      annotateForm.classList.add("annotate-sheet");
      ["top", "left", "width"].forEach(function (property) { annotateForm.style[property] = ""; });
      // Keep the passage in view above the sheet.
      const clear = window.innerHeight - annotateForm.offsetHeight - 12;
      if (box.bottom > clear) window.scrollBy({ top: box.bottom - clear, behavior: "instant" });
      return;
    }
    annotateForm.classList.remove("annotate-sheet");
    annotateForm.classList.add("annotate-popover");
    const frame = layout.getBoundingClientRect();
    const column = margin.getBoundingClientRect();
    annotateForm.style.top = Math.max(0, box.top - frame.top - 16) + "px";
    annotateForm.style.left = column.left - frame.left + "px";
    annotateForm.style.width = column.width + "px";
  }

  if (closeButton) closeButton.addEventListener("click", function () { formClose(true); });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && annotateForm && annotateForm.classList.contains("annotate-floating")) {
      formClose(annotateForm.contains(document.activeElement));
    }
  });
  oneColumn.addEventListener("change", function () {
    if (annotateForm && annotateForm.classList.contains("annotate-floating") && selectedRange) {
      formOpenNear(selectedRange);
    }
  });

  // --- rendered / source tabs ---------------------------------------------------------------

  document.querySelectorAll(".view-tab").forEach(function (tab) {
    tab.addEventListener("click", function () {
      const view = tab.dataset.view;
      document.querySelectorAll(".view-tab").forEach(function (other) {
        other.setAttribute("aria-selected", other === tab ? "true" : "false");
      });
      rendered.hidden = view !== "rendered";
      sourceView.hidden = view !== "source";
    });
  });

  // --- annotate -----------------------------------------------------------------------------

  const form = document.getElementById("annotate-form");
  if (form) {
    const kind = form.querySelector("[name=kind]");
    const syncKind = function () {
      form.querySelectorAll("[data-kind-only]").forEach(function (field) {
        field.hidden = field.dataset.kindOnly !== kind.value;
      });
      form.querySelectorAll("[data-kind-hide]").forEach(function (field) {
        field.hidden = field.dataset.kindHide === kind.value;
      });
    };
    kind.addEventListener("change", syncKind);
    syncKind();
    form.querySelector("#whole-document").addEventListener("change", function () {
      if (form.querySelector("#whole-document").checked) {
        showError(document.getElementById("annotate-error"), "");
      }
      renderPreview();
    });

    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      const error = document.getElementById("annotate-error");
      const whole = form.querySelector("#whole-document").checked;
      if (!whole && !captured) {
        showError(error, "Select a passage in the document first, or tick “About the whole document”.");
        return;
      }
      const payload = {
        area: form.area.value,
        kind: kind.value,
        severity: form.severity.value,
        body: form.body.value,
      };
      if (kind.value === "alternative") payload.tradeoff = form.tradeoff.value;
      // Any kind may name the pinned constraint it works inside; the "constraint" kind must.
      if (form.constraint && (form.constraint.value || kind.value === "constraint")) {
        payload.constraint = form.constraint.value;
      }
      if (!whole) {
        payload.position = { start: captured.start, end: captured.end };
        payload.quote = { exact: source.slice(captured.start, captured.end).join("") };
      }
      const button = form.querySelector("button[type=submit]");
      button.disabled = true;
      let created;
      try {
        created = await api("POST", app.dataset.annotationsUrl, payload);
      } catch (problem) {
        showError(error, problem.message);
        return;
      } finally {
        button.disabled = false;
      }
      reloadAt("#ann-" + created.id);
    });
  }

  // --- rank risks: drag, or the ↑/↓ buttons -------------------------------------------------

  const riskList = document.getElementById("risk-list");
  if (riskList && canEdit) {
    const rankingError = document.getElementById("ranking-error");
    // A long list shows its worst risks first; the others (data-rest, in order) follow them in
    // every ranking sent, since the ranking lists every risk exactly once.
    const order = function () {
      const shown = Array.from(riskList.querySelectorAll(".risk-item")).map(function (li) {
        return parseInt(li.dataset.id, 10);
      });
      const rest = (riskList.dataset.rest || "").split(",").filter(Boolean).map(function (id) {
        return parseInt(id, 10);
      });
      return shown.concat(rest.filter(function (id) { return shown.indexOf(id) === -1; }));
    };
    const renumber = function () {
      riskList.querySelectorAll(".risk-item").forEach(function (li, index) {
        li.querySelector("[data-rank]").textContent = "#" + (index + 1);
        const margin = document.querySelector("#ann-" + li.dataset.id + " .rank-badge");
        if (margin) margin.textContent = "#" + (index + 1);
      });
    };
    const restore = function (ids) {
      ids.forEach(function (id) {
        riskList.appendChild(riskList.querySelector('.risk-item[data-id="' + id + '"]'));
      });
    };
    const save = async function (previous) {
      riskList.setAttribute("aria-busy", "true");
      try {
        await api("POST", app.dataset.rankingUrl, { order: order() });
      } catch (error) {
        restore(previous);
        showError(rankingError, error.message);
        return;
      } finally {
        riskList.removeAttribute("aria-busy");
      }
      showError(rankingError, "");
      renumber();
      riskList.dataset.saved = order().join(",");
    };

    riskList.addEventListener("click", function (event) {
      const button = event.target.closest("[data-move]");
      if (!button) return;
      const item = button.closest(".risk-item");
      const previous = order();
      if (button.dataset.move === "up" && item.previousElementSibling) {
        riskList.insertBefore(item, item.previousElementSibling);
      } else if (button.dataset.move === "down" && item.nextElementSibling) {
        riskList.insertBefore(item.nextElementSibling, item);
      } else {
        return;
      }
      button.focus();
      save(previous);
    });

    let dragged = null;
    let before = null;
    riskList.addEventListener("dragstart", function (event) {
      dragged = event.target.closest(".risk-item");
      if (!dragged) return;
      before = order();
      dragged.classList.add("dragging");
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", dragged.dataset.id);
    });
    riskList.addEventListener("dragover", function (event) {
      if (!dragged) return;
      event.preventDefault();
      const over = event.target.closest(".risk-item");
      if (!over || over === dragged) return;
      const box = over.getBoundingClientRect();
      const after = event.clientY > box.top + box.height / 2;
      riskList.insertBefore(dragged, after ? over.nextElementSibling : over);
    });
    riskList.addEventListener("drop", function (event) {
      event.preventDefault();
    });
    riskList.addEventListener("dragend", function () {
      if (!dragged) return;
      dragged.classList.remove("dragging");
      dragged = null;
      if (before && before.join(",") !== order().join(",")) save(before);
      before = null;
    });
  }

  // "Show all risks": the whole list replaces the first ones; focus goes to the first new one.
  const risksMore = document.getElementById("risks-more");
  if (riskList && risksMore) {
    document.addEventListener("htmx:afterSettle", function (event) {
      if (event.detail.target !== riskList) return;
      const shown = (riskList.dataset.rest || "").split(",").filter(Boolean)[0];
      delete riskList.dataset.rest;
      risksMore.remove();
      const first = shown && riskList.querySelector('.risk-item[data-id="' + shown + '"] .risk-text');
      if (first) first.focus();
    });
  }

  // --- issue status, delete, re-attach ----------------------------------------------------------

  // Cards also arrive later ("Show more annotations"): listen on the page, not on each card.
  app.addEventListener("change", async function (event) {
    const select = event.target.closest(".status-select");
    if (!select) return;
    const item = select.closest(".ann");
    const options = Array.from(select.options);
    try {
      await api("PATCH", select.dataset.url, { status: select.value });
    } catch (error) {
      const saved = options.find(function (option) { return option.defaultSelected; });
      if (saved) select.value = saved.value;
      window.alert(error.message);
      return;
    }
    options.forEach(function (option) { option.defaultSelected = option.value === select.value; });
    if (item) item.classList.toggle("ann-closed", select.value !== "open");
  });

  app.addEventListener("click", async function (event) {
    const button = event.target.closest("[data-delete]");
    if (!button) return;
    if (!window.confirm("Delete this annotation?")) return;
    try {
      await api("DELETE", button.dataset.delete);
    } catch (error) {
      window.alert(error.message);
      return;
    }
    reloadAt("");
  });

  reattachButtons.forEach(function (button) {
    button.addEventListener("click", async function () {
      if (!captured) return;
      try {
        await api("POST", button.dataset.reattach, {
          revision: parseInt(app.dataset.viewedRevision, 10),
          position: { start: captured.start, end: captured.end },
        });
      } catch (error) {
        showError(document.getElementById("reattach-error"), error.message);
        return;
      }
      reloadAt("#ann-" + button.closest("[data-ann-id]").dataset.annId);
    });
  });

  // --- highlights ↔ margin ----------------------------------------------------------------------

  function marksFor(id) {
    return Array.from(document.querySelectorAll("mark[data-ann]")).filter(function (mark) {
      return mark.dataset.ann.split(" ").indexOf(String(id)) !== -1;
    });
  }

  function flash(elements) {
    elements.forEach(function (el) {
      el.classList.add("flash");
      window.setTimeout(function () { el.classList.remove("flash"); }, 1200);
    });
  }

  document.addEventListener("mouseover", function (event) {
    const mark = event.target.closest && event.target.closest("mark[data-ann]");
    document.querySelectorAll(".ann.active").forEach(function (el) { el.classList.remove("active"); });
    if (!mark) return;
    mark.dataset.ann.split(" ").forEach(function (id) {
      const item = document.getElementById("ann-" + id);
      if (item) item.classList.add("active");
    });
  });

  // --- cards not on the page yet ---------------------------------------------------------------
  // The page renders the first cards; the rest come from the "Show more annotations" fragment.
  // A highlight, a risk link or a #ann-<id> address for a card not loaded yet loads the cards
  // up to it first (?until=<id>).

  function ensureCard(id) {
    const item = document.getElementById("ann-" + id);
    const more = document.getElementById("ann-more");
    if (item || !more || !window.htmx) return Promise.resolve(item);
    const url = more.dataset.url + "&until=" + encodeURIComponent(id);
    return window.htmx.ajax("GET", url, { target: "#ann-more", swap: "outerHTML" }).then(function () {
      return document.getElementById("ann-" + id);
    });
  }

  function showCard(id) {
    return ensureCard(id).then(function (item) {
      if (!item) return;
      item.scrollIntoView({ behavior: "smooth", block: "center" });
      flash([item]);
    });
  }

  // After "Show more annotations" (the button, not a highlight's load), focus goes to the
  // first card it brought, so Tab continues through the new cards.
  let cardsBefore = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    const elt = event.detail.elt;
    if (elt && elt.tagName === "BUTTON" && elt.closest("#ann-more")) {
      cardsBefore = document.querySelectorAll("#ann-cards .ann").length;
    }
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (cardsBefore === null) return;
    const first = document.querySelectorAll("#ann-cards .ann")[cardsBefore];
    cardsBefore = null;
    if (first) {
      first.setAttribute("tabindex", "-1");
      first.focus();
    }
  });

  const wanted = /^#ann-(\d+)$/.exec(window.location.hash);
  if (wanted && !document.getElementById("ann-" + wanted[1])) {
    ensureCard(wanted[1]).then(function (item) {
      if (item) item.scrollIntoView({ block: "center" });
    });
  }

  document.addEventListener("click", function (event) {
    const link = event.target.closest("a[href^='#ann-']");
    if (link) {
      const id = link.getAttribute("href").slice(5);
      if (!document.getElementById("ann-" + id)) {
        event.preventDefault();
        showCard(id).then(function () {
          history.replaceState(null, "", "#ann-" + id);
        });
      }
      return;
    }
    const mark = event.target.closest("mark[data-ann]");
    if (mark && document.getSelection().isCollapsed) {
      showCard(mark.dataset.ann.split(" ")[0]);
      return;
    }
    const item = event.target.closest(".ann-quote");
    if (item) {
      const marks = marksFor(item.closest(".ann").dataset.annId);
      if (marks.length) {
        marks[0].scrollIntoView({ behavior: "smooth", block: "center" });
        flash(marks);
      }
    }
  });

  // --- submit: ask first ------------------------------------------------------------------------
  // Submitting makes the review read-only and shows it to the author: the button opens a
  // confirmation that says what is being sent (annotations, risks, checklist, verdict).

  const submitForm = document.getElementById("submit-form");
  const confirmDialog = document.getElementById("submit-confirm");
  if (submitForm && confirmDialog && typeof confirmDialog.showModal === "function") {
    let confirmed = false;
    const submitButton = document.getElementById("submit-review");
    const facts = document.getElementById("submit-confirm-facts");
    const fact = function (text) {
      const item = document.createElement("li");
      item.textContent = text;
      facts.appendChild(item);
    };
    const plural = function (count, word) { return count + " " + word + (count === 1 ? "" : "s"); };
    submitForm.addEventListener("submit", function (event) {
      if (confirmed) return;
      event.preventDefault();
      facts.textContent = "";
      const annotations = parseInt(app.dataset.annotationCount || "0", 10);
      const risks = riskList
        ? riskList.querySelectorAll(".risk-item").length
          + (riskList.dataset.rest || "").split(",").filter(Boolean).length
        : 0;
      fact(plural(annotations, "annotation") + ", " + plural(risks, "risk") + ".");
      const unset = document.querySelector('[data-coverage="unset"]');
      const unsetCount = unset ? parseInt(unset.textContent, 10) || 0 : 0;
      fact(unsetCount ? "Checklist: " + plural(unsetCount, "area") + " not assessed."
        : "Checklist: every area assessed.");
      const verdict = submitForm.querySelector("input[name=verdict]:checked");
      const label = verdict && verdict.closest("label");
      fact("Verdict: " + (label ? label.textContent.trim() : "none") + ".");
      const summary = submitForm.querySelector("#summary");
      if (summary && !summary.value.trim()) fact("No summary.");
      confirmDialog.showModal();
      document.getElementById("submit-confirm-yes").focus();
    });
    document.getElementById("submit-confirm-yes").addEventListener("click", function () {
      confirmed = true;
      confirmDialog.close();
      submitForm.requestSubmit(submitButton);
    });
    document.getElementById("submit-confirm-no").addEventListener("click", function () {
      confirmDialog.close();
    });
    confirmDialog.addEventListener("close", function () {
      if (!confirmed && submitButton) submitButton.focus();
    });
  }

  renderPreview();
})();

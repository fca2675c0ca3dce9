// Diff page: jump to the next / previous change (buttons, or the n and p keys). Targets are the
// rows marked data-change, looked up at each jump so rows loaded by expanding a fold count too.
(function () {
  "use strict";
  let last = null; // the row of the last jump: the next one continues from it

  function targets() {
    return Array.from(document.querySelectorAll(".diff [data-change]"));
  }

  function jump(step) {
    const rows = targets();
    if (!rows.length) return;
    let current = last ? rows.indexOf(last) : -1;
    if (current < 0) {
      // No jump yet (or its row was replaced): start from what is on screen.
      const below = rows.findIndex(function (row) { return row.getBoundingClientRect().top > 80; });
      current = step > 0 ? (below < 0 ? rows.length : below) - 1 : below < 0 ? rows.length : below;
    }
    current = Math.min(Math.max(current + step, 0), rows.length - 1);
    last = rows[current];
    rows.forEach(function (row) { row.classList.remove("diff-current"); });
    const row = rows[current];
    row.classList.add("diff-current");
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "center" });
    const position = document.getElementById("diff-position");
    if (position) position.textContent = "Change " + (current + 1) + " of " + rows.length;
  }

  document.addEventListener("click", function (event) {
    const button = event.target.closest("[data-diff-nav]");
    if (button) jump(Number(button.dataset.diffNav));
    // A click anywhere on a fold's bar (not only on its small links) opens it: all of it when
    // it offers that, else its first lines.
    const fold = event.target.closest(".diff-fold");
    if (fold && !event.target.closest("button, a")) {
      const open = fold.querySelector(".diff-expand-all") || fold.querySelector(".diff-expand");
      if (open) open.click();
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select") return;
    if (event.key === "n") jump(1);
    else if (event.key === "p") jump(-1);
  });
})();

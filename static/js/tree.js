// The version tree. Its "Show older versions": htmx swaps in the tree drawn with more versions.
// Keyboard focus then goes to the first of the versions just revealed (the row the old gap
// started at), so Tab continues through them; failing that, to the next "Show older versions".
(function () {
  "use strict";
  document.addEventListener("htmx:afterSettle", function () {
    const tree = document.getElementById("version-tree");
    if (!tree || !tree.dataset.reveal) return;
    const number = tree.dataset.reveal;
    delete tree.dataset.reveal;
    const row = tree.querySelector(".tree-row[data-number='" + number + "'] .tree-link");
    const target = row || tree.querySelector("#tree-older") || tree.querySelector("#compare-button");
    if (target) target.focus();
  });
})();

// Arrow keys move between the versions' links (Home/End: the newest/oldest drawn); Enter opens.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    const link = event.target.closest && event.target.closest("#version-tree .tree-link");
    if (!link || event.altKey || event.ctrlKey || event.metaKey) return;
    const links = Array.from(document.querySelectorAll("#version-tree .tree-link"));
    const at = links.indexOf(link);
    let to = -1;
    if (event.key === "ArrowDown") to = Math.min(at + 1, links.length - 1);
    else if (event.key === "ArrowUp") to = Math.max(at - 1, 0);
    else if (event.key === "Home") to = 0;
    else if (event.key === "End") to = links.length - 1;
    if (to < 0) return;
    event.preventDefault();
    links[to].focus();
  });
})();

// Narrow screens: the tree is a section that opens with its "Versions" button, so it never
// covers the editor; wide screens always show it beside the editor.
(function () {
  "use strict";
  const toggle = document.getElementById("tree-toggle");
  const body = document.getElementById("tree-body");
  if (!toggle || !body) return;
  const narrow = window.matchMedia("(max-width: 960px)");
  toggle.closest(".tree-panel").classList.add("tree-collapsible");
  toggle.hidden = false;

  function apply() {
    body.hidden = narrow.matches && toggle.getAttribute("aria-expanded") !== "true";
  }
  toggle.addEventListener("click", function () {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    apply();
  });
  narrow.addEventListener("change", apply);
  apply();
})();

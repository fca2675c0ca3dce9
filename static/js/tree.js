// The version tree's "Show older versions": htmx swaps in the tree drawn with more versions.
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

// Narrow screens: the header's links fold behind a "Menu" button (aria-expanded). Without
// JavaScript the links simply wrap, so nothing is ever out of reach.
(function () {
  "use strict";
  const nav = document.querySelector(".nav");
  const toggle = nav && nav.querySelector(".nav-toggle");
  const items = document.getElementById("nav-items");
  if (!toggle || !items) return;
  nav.classList.add("nav-js");
  toggle.hidden = false;

  function set(open) {
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    nav.classList.toggle("nav-open", open);
  }

  toggle.addEventListener("click", function () {
    set(toggle.getAttribute("aria-expanded") !== "true");
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && nav.classList.contains("nav-open")) {
      set(false);
      toggle.focus();
    }
  });
})();

// Estimator panel: Enter in a practice answer checks the answers. htmx sends the button that
// submitted a form only when it was clicked, so route Enter through a click on "Check".
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter") return;
    const field = event.target.closest(".practice-answer");
    if (!field) return;
    const form = field.closest("form");
    const check = form && form.querySelector(".practice-check");
    if (!check) return;
    event.preventDefault();
    check.click();
  });
})();

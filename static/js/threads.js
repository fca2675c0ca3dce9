// Document page: change an open issue's status from the "Open issues" list (JSON API, session
// auth with the CSRF token the page carries). Replies use plain forms that htmx enhances.
(function () {
  "use strict";

  document.querySelectorAll("#open-issues .status-select").forEach(function (select) {
    let current = select.value;
    select.addEventListener("change", async function () {
      try {
        await window.Redline.api(select.dataset.url, { method: "PATCH", json: { status: select.value } });
      } catch (error) {
        select.value = current;
        window.alert(error.message);
        return;
      }
      current = select.value;
      const item = select.closest(".issue");
      if (item) item.classList.toggle("ann-closed", current !== "open");
    });
  });
})();

// Document page: change an open issue's status from the "Open issues" list (JSON API, session
// auth with the CSRF token the page carries). Replies use plain forms that htmx enhances.
(function () {
  "use strict";

  document.querySelectorAll("#open-issues .status-select").forEach(function (select) {
    let current = select.value;
    select.addEventListener("change", async function () {
      const response = await fetch(select.dataset.url, {
        method: "PATCH",
        credentials: "same-origin",
        headers: {
          "Accept": "application/json",
          "Content-Type": "application/json",
          "X-CSRFToken": window.Redline.csrfToken(),
        },
        body: JSON.stringify({ status: select.value }),
      });
      if (!response.ok) {
        let message = response.statusText;
        try { message = (await response.json()).detail || message; } catch { /* keep */ }
        select.value = current;
        window.alert(message);
        return;
      }
      current = select.value;
      const item = select.closest(".issue");
      if (item) item.classList.toggle("ann-closed", current !== "open");
    });
  });
})();

// The CSRF token for the page's own JSON calls (fetch, XMLHttpRequest) under the browser session:
// the one base.html puts in <body hx-headers> for htmx, else a form's hidden input (a page may
// drop hx-headers). Loaded by base.html before every page's scripts: Redline.csrfToken().
(function () {
  "use strict";

  function fromHtmxHeaders() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch {
      return "";
    }
  }

  function csrfToken() {
    const input = document.querySelector('input[name="csrfmiddlewaretoken"]');
    return fromHtmxHeaders() || (input ? input.value : "");
  }

  window.Redline = Object.assign(window.Redline || {}, { csrfToken: csrfToken });
})();

// Share dialog: open/close the <dialog>, copy the one-time link.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    const opener = event.target.closest("[data-open-dialog]");
    if (opener) {
      const dialog = document.getElementById(opener.dataset.openDialog);
      if (dialog) dialog.showModal();
      return;
    }
    const closer = event.target.closest("[data-close-dialog]");
    if (closer) {
      closer.closest("dialog").close();
      return;
    }
    const copier = event.target.closest("[data-copy]");
    if (copier) {
      const input = document.querySelector(copier.dataset.copy);
      if (!input) return;
      input.select();
      const done = function () { copier.textContent = "Copied"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(done, function () { document.execCommand("copy"); done(); });
      } else {
        document.execCommand("copy");
        done();
      }
    }
  });

  // Panels marked data-swap-errors render their own 400/403/409 answers (an error at its
  // field, a conflict with a retry): swap them in instead of htmx's default of ignoring them,
  // so a failed request never leaves an earlier result (e.g. the last link) on screen.
  document.addEventListener("htmx:beforeSwap", function (event) {
    const status = event.detail.xhr.status;
    const target = event.detail.target;
    if (status >= 400 && status < 500 && target && target.closest("[data-swap-errors]")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();

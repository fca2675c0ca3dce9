// Long texts on version pages: the page holds the first screenful of each text; the rest loads
// one range at a time from the range API as the reader scrolls near the end of what is loaded
// (IntersectionObserver), or with "Load more" (the keyboard path). Text is appended as text
// nodes, never parsed as HTML. A failed range shows an error line and stops loading until
// "Load more" is pressed again.
(function () {
  "use strict";

  // A failure whose message is written for the reader as it is.
  class Shown extends Error {}

  // What the error line says about a failed range.
  function explain(problem) {
    if (problem instanceof Shown) return problem.message;
    if (problem instanceof window.Redline.ApiError) {
      if (problem.status === 404) {
        return "This text is no longer available here (access was withdrawn or the link now shows another version). Reload the page.";
      }
      return "Could not load more of this text (HTTP " + problem.status + "). Try “Load more” again.";
    }
    return "Could not load more of this text (network error). Try “Load more” again.";
  }

  function setup(box) {
    const url = box.dataset.url;
    const body = box.querySelector(".lazy-text-body");
    const count = box.querySelector("[data-lazy-count]");
    const more = box.querySelector("[data-lazy-more]");
    const error = box.querySelector(".lazy-text-error");
    const sentinel = box.querySelector(".lazy-text-sentinel");
    let total = Number(box.dataset.total);
    let loaded = Number(box.dataset.loaded);
    let busy = false;
    let failed = false;
    let near = false; // the sentinel is within reach of the viewport
    let observer = null;

    function finish() {
      box.dataset.complete = "true";
      more.hidden = true;
      if (observer) observer.disconnect();
    }

    function show() {
      box.dataset.loaded = String(loaded);
      count.textContent = loaded.toLocaleString("en-US");
      if (loaded >= total) finish();
    }

    function fail(message) {
      failed = true;
      error.textContent = message;
      error.hidden = false;
    }

    function next() {
      if (busy || loaded >= total) return;
      busy = true;
      more.disabled = true;
      const separator = url.indexOf("?") < 0 ? "?" : "&";
      window.Redline.api(url + separator + "offset=" + loaded)
        .then(function (range) {
          if (range.offset !== loaded) throw new Shown("The server answered a different range; reload the page.");
          body.insertBefore(document.createTextNode(range.text), sentinel);
          loaded += range.length;
          total = range.total;
          if (range.length === 0) loaded = total;
          failed = false;
          error.hidden = true;
          show();
        })
        .catch(function (problem) {
          fail(explain(problem));
        })
        .finally(function () {
          busy = false;
          more.disabled = false;
          // Still near the end after a short range: keep going.
          if (near && !failed && loaded < total) next();
        });
    }

    more.addEventListener("click", function () {
      failed = false;
      next();
    });
    if ("IntersectionObserver" in window) {
      observer = new IntersectionObserver(function (entries) {
        near = entries.some(function (entry) { return entry.isIntersecting; });
        if (near && !failed) next();
        // The text scrolls inside its own box (bounded height): near its end, not the page's.
      }, { root: body, rootMargin: "0px 0px 800px 0px" });
      observer.observe(sentinel);
    }
    show();
  }

  document.querySelectorAll("[data-lazy-text]").forEach(setup);
})();

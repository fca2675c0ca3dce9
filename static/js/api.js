// The pages' own calls to the server, written once: Redline.api(url, options) for a JSON API call
// or an HTML fragment, Redline.poll(step, options) for following something that is still running.
// Loaded in <head> by base.html, so it is there before any page script, even one that a fragment
// brings in mid-page (critique.js).
//
// Redline.api(url, {method, json, as, headers, signal}) sends the session's cookies, on a write
// the CSRF token, and `json` (when given) as a JSON body. It answers the parsed JSON (null for an
// empty answer), or the text with as: "text" (an HTML fragment). An answer other than 2xx throws
// a Redline.ApiError: its message is the server's `detail` (docs/api.md: every API error is JSON
// with one), else "The server answered <status>."; it carries `status`, `detail` (null without
// one) and `retryAfter`, the seconds of a 429's or 503's Retry-After (null without one). A request
// that never got an answer rejects with fetch's own TypeError.
//
// Redline.poll(step, {delay, first, maxDelay, signal}) calls step() `first` ms from now (0), then
// `delay` ms after each answer, until step() resolves true (done) or the signal aborts; it answers
// a promise of true (done) or false (aborted). A step that fails waits twice as long as the last
// wait, up to maxDelay (30 × delay), or the server's Retry-After when that is longer; the next
// success returns to `delay`.
(function () {
  "use strict";

  // The CSRF token: the one base.html puts in <body hx-headers> for htmx, else a form's hidden
  // input (a page may drop hx-headers).
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

  // Retry-After is seconds or an HTTP date.
  function retryAfterSeconds(value) {
    if (!value) return null;
    const seconds = Number(value);
    if (Number.isFinite(seconds)) return Math.max(0, seconds);
    const when = Date.parse(value);
    return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
  }

  function detailOf(text) {
    try {
      const detail = JSON.parse(text).detail;
      return typeof detail === "string" && detail ? detail : null;
    } catch {
      return null; // not JSON: a proxy's page, an HTML error page
    }
  }

  class ApiError extends Error {
    constructor(response, detail) {
      super(detail || "The server answered " + response.status + ".");
      this.name = "ApiError";
      this.status = response.status;
      this.detail = detail;
      this.retryAfter = retryAfterSeconds(response.headers.get("Retry-After"));
    }
  }

  const SAFE_METHODS = ["GET", "HEAD", "OPTIONS"];

  async function api(url, options) {
    const opts = options || {};
    const method = (opts.method || "GET").toUpperCase();
    const asText = opts.as === "text";
    const headers = { Accept: asText ? "text/html" : "application/json" };
    if (opts.json !== undefined) headers["Content-Type"] = "application/json";
    if (SAFE_METHODS.indexOf(method) === -1) headers["X-CSRFToken"] = csrfToken();
    const response = await fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: Object.assign(headers, opts.headers),
      body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
      signal: opts.signal,
    });
    const text = await response.text();
    if (!response.ok) throw new ApiError(response, detailOf(text));
    if (asText) return text;
    return text ? JSON.parse(text) : null;
  }

  function poll(step, options) {
    const delay = options.delay;
    const maxDelay = options.maxDelay || delay * 30;
    const signal = options.signal;
    let wait = delay;
    return new Promise(function (resolve) {
      function tick() {
        if (signal && signal.aborted) {
          resolve(false);
          return;
        }
        Promise.resolve()
          .then(step)
          .then(
            function (done) {
              if (done) {
                resolve(true);
                return;
              }
              wait = delay;
              window.setTimeout(tick, delay);
            },
            function (error) {
              wait = Math.min(wait * 2, maxDelay);
              const asked = error && error.retryAfter ? error.retryAfter * 1000 : 0;
              window.setTimeout(tick, Math.max(wait, asked));
            }
          );
      }
      window.setTimeout(tick, options.first || 0);
    });
  }

  window.Redline = Object.assign(window.Redline || {}, { api: api, poll: poll, ApiError: ApiError });
})();

// Times in the reader's own time zone, with the zone named. The server writes every moment as
// <time datetime="…Z" data-local="datetime|time|date">2026-12-01 14:00 UTC</time> (common/times.py,
// the {% when %} tag); this rewrites the text into the browser's zone ("Dec 1, 09:00 EST";
// "time": "09:00 EST"; "date": "Dec 1, 2026") and sets a tooltip with the full local time and
// the same moment in UTC, each labelled with its own zone.
// Forms with an input[data-browser-tz] send the zone's IANA name, so a datetime-local picker is
// read on the server in the zone it was picked in; [data-tz-name] shows that zone next to it.
// Loaded once by base.html; later fragments (htmx) are localised as they arrive.
(function () {
  "use strict";
  if (window.redlineLocaltime) return;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const formats = {
    datetime: new Intl.DateTimeFormat(undefined, {
      month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false,
      timeZoneName: "short",
    }),
    // The time of day alone ("09:00 EST"), for narrow places like tree rows.
    time: new Intl.DateTimeFormat(undefined, {
      hour: "2-digit", minute: "2-digit", hour12: false, timeZoneName: "short",
    }),
    date: new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" }),
  };
  const full = new Intl.DateTimeFormat(undefined, {
    weekday: "short", year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false, timeZoneName: "short",
  });
  const utc = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
    hour12: false, timeZone: "UTC", timeZoneName: "short",
  });

  function localise(root) {
    root.querySelectorAll("time[data-local]").forEach(function (element) {
      const when = new Date(element.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      const format = formats[element.dataset.local] || formats.datetime;
      element.textContent = format.format(when);
      element.title = full.format(when) + " (" + zone + ") · " + utc.format(when);
      element.dataset.localised = zone;
    });
    root.querySelectorAll("input[data-browser-tz]").forEach(function (input) { input.value = zone; });
    root.querySelectorAll("[data-tz-name]").forEach(function (element) {
      element.textContent = "(" + zone + ")";
    });
  }

  window.redlineLocaltime = { localise: localise, zone: zone };
  localise(document);
  document.addEventListener("htmx:load", function (event) { localise(event.detail.elt); });
})();

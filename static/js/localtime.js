// Times in the reader's own time zone, with the zone named: every <time data-local datetime=…>
// is rewritten from its UTC text ("Dec 1 14:00 UTC") to the browser's zone ("Dec 1, 09:00 EST";
// data-local="time" gives "09:00 EST").
// Forms with an input[data-browser-tz] send the zone's IANA name, so a datetime-local picker is
// read on the server in the zone it was picked in; [data-tz-name] shows that zone next to it.
(function () {
  "use strict";
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const format = new Intl.DateTimeFormat(undefined, {
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hour12: false,
    timeZoneName: "short",
  });

  // data-local="time": the time of day alone ("09:00 EST"), for narrow places like tree rows.
  const timeOnly = new Intl.DateTimeFormat(undefined, {
    hour: "2-digit",
    minute: "2-digit",
    hour12: false,
    timeZoneName: "short",
  });

  function localise(root) {
    root.querySelectorAll("time[data-local]").forEach(function (element) {
      const when = new Date(element.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      element.textContent = (element.dataset.local === "time" ? timeOnly : format).format(when);
      element.title = when.toISOString().replace(".000Z", "Z") + " (" + zone + ")";
    });
    root.querySelectorAll("input[data-browser-tz]").forEach(function (input) { input.value = zone; });
    root.querySelectorAll("[data-tz-name]").forEach(function (element) {
      element.textContent = "(" + zone + ")";
    });
  }

  localise(document);
  document.addEventListener("htmx:load", function (event) { localise(event.detail.elt); });
})();

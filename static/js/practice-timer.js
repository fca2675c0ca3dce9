// Mock-review clock: elapsed time against the time allowed. Shown, never enforced: past the
// limit it says by how much, and after submit it stops at the time taken.
(function () {
  "use strict";

  const panel = document.getElementById("practice-timer");
  if (!panel) return;
  const started = Date.parse(panel.dataset.started);
  const allowed = parseInt(panel.dataset.minutes, 10) * 60;
  const ended = panel.dataset.ended ? Date.parse(panel.dataset.ended) : null;
  const clock = panel.querySelector("[data-timer-elapsed]");
  const note = panel.querySelector("[data-timer-note]");

  function format(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    const minutes = Math.floor(s / 60);
    const rest = String(s % 60).padStart(2, "0");
    return minutes + ":" + rest;
  }

  function tick() {
    const now = ended === null ? Date.now() : ended;
    const elapsed = (now - started) / 1000;
    clock.textContent = format(elapsed);
    const over = elapsed > allowed;
    panel.classList.toggle("timer-over", over);
    if (ended !== null) {
      note.textContent = "Submitted after " + format(elapsed) + (over ? " (over the time)." : ".");
    } else if (over) {
      note.textContent = "Over the time by " + format(elapsed - allowed) + ". Wrap up and submit.";
    } else {
      note.textContent = format(allowed - elapsed) + " left.";
    }
  }

  tick();
  if (ended === null) window.setInterval(tick, 1000);
})();

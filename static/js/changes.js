// The change request page (docs/design.md, Prompt change review): a passage selected in the
// text under review fills the comment form's passage and its exact offsets, so a repeated
// phrase is annotated where it was selected.
(function () {
  "use strict";
  var text = document.getElementById("change-text");
  var quote = document.getElementById("annotate-quote");
  var start = document.getElementById("annotate-start");
  var end = document.getElementById("annotate-end");
  if (!text || !quote || !start || !end) return;

  function offsetOf(node, offset) {
    var range = document.createRange();
    range.setStart(text, 0);
    range.setEnd(node, offset);
    return range.toString().length;
  }

  function take() {
    var selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
    var range = selection.getRangeAt(0);
    if (!text.contains(range.startContainer) || !text.contains(range.endContainer)) return;
    var from = offsetOf(range.startContainer, range.startOffset);
    var to = offsetOf(range.endContainer, range.endOffset);
    if (to <= from) return;
    quote.value = text.textContent.slice(from, to);
    start.value = String(from);
    end.value = String(to);
  }

  // Typing a passage by hand drops the offsets taken from an earlier selection.
  quote.addEventListener("input", function () {
    start.value = "";
    end.value = "";
  });
  text.addEventListener("mouseup", take);
  text.addEventListener("keyup", take);
  text.addEventListener("touchend", take);
})();

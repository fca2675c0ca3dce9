// Evaluations: the progress bar follows a running evaluation; the test-set table grows rows
// and variable columns in place. Without scripts: the page shows three blank rows to fill and
// the progress as it was when the page loaded.
(function () {
  "use strict";

  function followProgress() {
    var region = document.getElementById("eval-progress");
    if (!region || region.dataset.finished === "true") return;
    var url = region.dataset.url;
    // A failed poll is tried again later (Redline.poll backs off).
    window.Redline.poll(function () {
      return window.Redline.api(url, { as: "text" }).then(function (html) {
        var holder = document.createElement("div");
        holder.innerHTML = html;
        var fresh = holder.querySelector("#eval-progress");
        var current = document.getElementById("eval-progress");
        if (!fresh || !current) return false;
        current.replaceWith(fresh);
        if (fresh.dataset.finished !== "true") return false;
        window.location.reload(); // the matrix is drawn once every cell is in
        return true;
      });
    }, { delay: 1000, first: 1000 });
  }

  function labelled(tag, id, text, name) {
    var cell = document.createElement("td");
    var label = document.createElement("label");
    label.className = "visually-hidden";
    label.htmlFor = id;
    label.textContent = text;
    var field = document.createElement(tag);
    field.id = id;
    field.name = name;
    if (tag === "textarea") field.rows = 2;
    else field.type = "text"; // the app's text-field style (static/css/redline.css)
    cell.appendChild(label);
    cell.appendChild(field);
    return cell;
  }

  function tableEditor() {
    var form = document.getElementById("testset-form");
    var table = document.getElementById("testset-table");
    var addRow = document.getElementById("add-row");
    var addColumn = document.getElementById("add-column");
    if (!form || !table || !addRow || !addColumn) return;
    var count = document.getElementById("testset-rows");
    addRow.hidden = false;
    addColumn.hidden = false;

    function columns() {
      return Array.prototype.map.call(form.querySelectorAll("input[name=col]"), function (input) {
        return input.value || "variable";
      });
    }

    addRow.addEventListener("click", function () {
      var i = parseInt(count.value, 10);
      var row = document.createElement("tr");
      var head = document.createElement("th");
      head.scope = "row";
      head.textContent = "new";
      row.appendChild(head);
      columns().forEach(function (name, j) {
        var cell = labelled("textarea", "var-" + i + "-" + j, "New row, " + name, "var-" + i + "-" + j);
        cell.dataset.label = name;
        row.appendChild(cell);
      });
      var expected = labelled("textarea", "expected-" + i, "New row, expected output", "expected-" + i);
      expected.dataset.label = "Expected output";
      row.appendChild(expected);
      var note = labelled("input", "note-" + i, "New row, note", "note-" + i);
      note.dataset.label = "Note";
      row.appendChild(note);
      row.appendChild(document.createElement("td"));
      table.tBodies[0].appendChild(row);
      count.value = String(i + 1);
      row.querySelector("textarea, input").focus();
    });

    addColumn.addEventListener("click", function () {
      var j = columns().length;
      var headRow = table.tHead.rows[0];
      var th = document.createElement("th");
      th.scope = "col";
      var label = document.createElement("label");
      label.className = "visually-hidden";
      label.htmlFor = "col-" + j;
      label.textContent = "Variable name " + (j + 1);
      var input = document.createElement("input");
      input.type = "text";
      input.id = "col-" + j;
      input.name = "col";
      input.className = "col-name";
      input.placeholder = "variable name";
      th.appendChild(label);
      th.appendChild(input);
      headRow.insertBefore(th, headRow.cells[j + 1]);
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row, i) {
        var cell = labelled("textarea", "var-" + i + "-" + j, "Row " + (i + 1) + ", new variable", "var-" + i + "-" + j);
        row.insertBefore(cell, row.cells[j + 1]);
      });
      input.focus();
    });
  }

  followProgress();
  tableEditor();
})();

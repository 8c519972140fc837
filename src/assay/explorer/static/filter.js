// Filter the entries table by category and by one run's status, and (with conversations) by a
// conversation check: a conversation's turns show under its row. No network, no libraries.
(function () {
  "use strict";
  var cat = document.getElementById("f-category");
  var run = document.getElementById("f-run");
  var status = document.getElementById("f-status");
  var check = document.getElementById("f-check");
  var verdict = document.getElementById("f-verdict");
  var count = document.getElementById("f-count");
  var rows = document.querySelectorAll("#entries tbody tr:not(.conv)");
  var convs = document.querySelectorAll("#entries tbody tr.conv");
  function apply() {
    var shown = 0;
    var wanted = {};
    var any = {};
    var byCheck = check && check.value;
    for (var j = 0; j < convs.length; j++) {
      var c = convs[j];
      wanted[c.getAttribute("data-conv")] = !byCheck ||
        c.getAttribute("data-check-" + run.value + "-" + check.value) === verdict.value;
    }
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var conv = r.getAttribute("data-conv");
      var ok = (!cat.value || r.getAttribute("data-category") === cat.value) &&
        (!status.value || r.getAttribute("data-status-" + run.value) === status.value) &&
        (conv ? wanted[conv] : !byCheck);
      r.hidden = !ok;
      if (ok) { shown++; if (conv) { any[conv] = true; } }
    }
    for (var k = 0; k < convs.length; k++) {
      convs[k].hidden = !any[convs[k].getAttribute("data-conv")];
    }
    count.textContent = shown + " of " + rows.length + " entries" +
      (convs.length ? " (turns of " + Object.keys(any).length + " of " + convs.length + " conversations)" : "");
  }
  [cat, run, status, check, verdict].forEach(function (el) { if (el) { el.addEventListener("change", apply); } });
  var params = new URLSearchParams(window.location.search);
  if (params.get("category")) { cat.value = params.get("category"); }
  if (params.get("status")) { status.value = params.get("status"); }
  if (params.get("run")) { run.value = params.get("run"); }
  if (check && params.get("check")) { check.value = params.get("check"); }
  if (verdict && params.get("verdict")) { verdict.value = params.get("verdict"); }
  apply();
})();

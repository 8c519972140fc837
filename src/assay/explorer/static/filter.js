// Filter the entries table by category and by one run's status. No network, no libraries.
(function () {
  "use strict";
  var cat = document.getElementById("f-category");
  var run = document.getElementById("f-run");
  var status = document.getElementById("f-status");
  var count = document.getElementById("f-count");
  var rows = document.querySelectorAll("#entries tbody tr");
  function apply() {
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var ok = (!cat.value || r.getAttribute("data-category") === cat.value) &&
        (!status.value || r.getAttribute("data-status-" + run.value) === status.value);
      r.hidden = !ok;
      if (ok) { shown++; }
    }
    count.textContent = shown + " of " + rows.length + " entries";
  }
  [cat, run, status].forEach(function (el) { el.addEventListener("change", apply); });
  var params = new URLSearchParams(window.location.search);
  if (params.get("category")) { cat.value = params.get("category"); }
  if (params.get("status")) { status.value = params.get("status"); }
  apply();
})();

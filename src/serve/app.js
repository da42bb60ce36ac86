// closegate serve: keeps the board live through one server-sent-events stream (SPEC §25).
// The page is complete without this script; with it, each change the server reports fetches
// the live part again and swaps it in, keeping open the details the reader opened.
"use strict";
(function () {
  var body = document.body;
  var q = "?token=" + encodeURIComponent(body.getAttribute("data-token"));
  var state = document.getElementById("live-state");
  var shown = body.getAttribute("data-generation");
  var busy = false;
  var again = false;

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch("/fragment" + q, { cache: "no-store" })
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.text(); })
      .then(function (html) {
        var live = document.getElementById("live");
        var open = {};
        live.querySelectorAll("details[open]").forEach(function (d) {
          open[d.getAttribute("data-key") || d.textContent.slice(0, 80)] = true;
        });
        live.innerHTML = html;
        live.querySelectorAll("details").forEach(function (d) {
          if (open[d.getAttribute("data-key") || d.textContent.slice(0, 80)]) { d.open = true; }
        });
        var asOf = document.getElementById("as-of");
        if (asOf) { shown = asOf.getAttribute("data-generation"); }
        body.setAttribute("data-updates", String(Number(body.getAttribute("data-updates") || 0) + 1));
      })
      .catch(function () { state.textContent = "cannot reach the server"; })
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  var events = new EventSource("/events" + q);
  events.addEventListener("hello", function (e) {
    state.textContent = "live";
    if (e.data !== shown) { refresh(); }
  });
  events.addEventListener("change", function () { refresh(); });
  events.onerror = function () { state.textContent = "reconnecting"; };
})();

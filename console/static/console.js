// signalgate console: local times and the live signal log. Everything shown is set as
// text (never as HTML): signal contents come from outside.
(function () {
  "use strict";

  function localTimes(root) {
    root.querySelectorAll("time[datetime]:not([data-local])").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) { return; }
      el.title = el.getAttribute("datetime");
      el.textContent = d.toLocaleString();
      el.setAttribute("data-local", "1");
    });
  }

  function timeEl(iso) {
    var t = document.createElement("time");
    t.setAttribute("datetime", iso);
    t.textContent = iso;
    return t;
  }

  function follow(log) {
    var state = document.getElementById("log-state");
    var empty = document.getElementById("log-empty");
    var seen = {};
    // Shown only with JavaScript: without it, a <noscript> says what the log holds.
    if (state) { state.hidden = false; }
    if (empty) { empty.hidden = false; }
    var es = new EventSource(log.getAttribute("data-stream"));
    function add(kind, f) {
      if (seen[f.seq]) { return; }
      seen[f.seq] = true;
      var li = document.createElement("li");
      li.className = "frame " + kind;
      li.setAttribute("data-seq", f.seq);
      var head = document.createElement("div");
      head.className = "head";
      var b = document.createElement("b");
      b.textContent = "#" + f.seq;
      head.appendChild(b);
      if (kind === "run") {
        head.appendChild(document.createTextNode(" run " + f.status + (f.origin ? " (" + f.origin + ")" : "") + " · "));
        li.classList.add("run-" + f.status);
      } else {
        var a = document.createElement("span");
        a.className = "action a-" + f.action;
        a.textContent = f.action;
        head.appendChild(document.createTextNode(" "));
        head.appendChild(a);
        head.appendChild(document.createTextNode(" " + f.type + (f.runId ? " · in run" : "") + " · "));
      }
      head.appendChild(timeEl(f.createdAt));
      li.appendChild(head);
      if (kind === "signal") {
        var pre = document.createElement("pre");
        pre.className = "xml";
        pre.textContent = f.xml;
        li.appendChild(pre);
      }
      log.appendChild(li);
      if (empty) { empty.hidden = true; }
      localTimes(li);
    }
    es.addEventListener("signal", function (e) { add("signal", JSON.parse(e.data)); });
    es.addEventListener("run", function (e) { add("run", JSON.parse(e.data)); });
    es.onopen = function () { if (state) { state.textContent = "live"; state.className = "live"; } };
    // A stream refused on reconnecting (its session ended) is closed for good.
    es.onerror = function () {
      if (!state) { return; }
      state.className = "muted";
      state.textContent = es.readyState === EventSource.CLOSED ? "stopped: reload the page (sign in again if your session ended)" : "reconnecting…";
    };
  }

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    var log = document.getElementById("log");
    if (log && log.getAttribute("data-stream")) { follow(log); }
    // An outerHTML swap settles on the element it replaced: look at the whole page.
    document.body.addEventListener("htmx:afterSettle", function () { localTimes(document); });
  });
})();

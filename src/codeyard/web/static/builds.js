// A running build's page follows its trace: <pre data-follow="URL" data-offset="N" data-poll-ms="MS">
// polls URL?offset=N every MS milliseconds (read at each poll: a test shortens it on an open page)
// and appends what is new as text (never as HTML) until the build is no longer pending or running;
// then the Cancel button goes.
(function () {
  var trace = document.querySelector("pre[data-follow]");
  if (!trace) return;
  var url = trace.getAttribute("data-follow");
  var offset = parseInt(trace.getAttribute("data-offset"), 10) || 0;
  var status = document.getElementById("build-status");
  var cancel = document.getElementById("build-cancel");
  var decoder = new TextDecoder("utf-8");
  function every() { return parseInt(trace.getAttribute("data-poll-ms"), 10) || 3000; }
  function poll() {
    fetch(url + "?offset=" + offset, { credentials: "same-origin" }).then(function (response) {
      if (!response.ok) return null;
      var state = response.headers.get("x-build-status");
      var next = parseInt(response.headers.get("x-trace-offset"), 10);
      return response.arrayBuffer().then(function (data) {
        if (data.byteLength) trace.appendChild(document.createTextNode(decoder.decode(data, { stream: true })));
        if (!isNaN(next)) offset = next;
        if (status && state) { status.textContent = state; status.className = "badge " + state; }
        if (state && state !== "pending" && state !== "running" && cancel) cancel.remove();
        return state;
      });
    }).then(function (state) {
      if (state === "pending" || state === "running") setTimeout(poll, every());
    }, function () { setTimeout(poll, 10000); });
  }
  setTimeout(poll, every());
})();

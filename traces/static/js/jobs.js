// Follows a background upload (a 202 from /api/jobs): polls its status URL, shows bytes
// read, records parsed and calls rebuilt on the upload's row, opens the trace when done.
(function () {
  "use strict";
  var POLL_MS = 400;

  function number(n) { return Number(n || 0).toLocaleString("en-US"); }
  function megabytes(n) { return (Number(n || 0) / 1048576).toFixed(1) + " MB"; }

  function show(job, bar, state) {
    if (job.state === "queued") {
      bar.value = 0;
      state.textContent = "queued…";
      return;
    }
    if (job.bytes_total && job.bytes_read < job.bytes_total) {
      bar.value = Math.round((job.bytes_read / job.bytes_total) * 100);
      state.textContent = "reading " + megabytes(job.bytes_read) + " of " + megabytes(job.bytes_total);
      return;
    }
    bar.removeAttribute("value");  // parsing: how many records there are is not known yet
    if (!job.records_parsed) { state.textContent = "parsing…"; return; }
    state.textContent = number(job.records_parsed) + " records parsed · " + number(job.calls_rebuilt) + " calls rebuilt";
  }

  function follow(first, row, bar, state, el) {
    row.dataset.job = first.id;
    row.classList.add("job");
    return new Promise(function (resolve) {
      function fail(message) {
        bar.remove();
        state.textContent = "failed";
        row.append(el("p", "error-text", message));
        resolve(null);
      }
      function check(job) {
        if (job.state === "done") {
          bar.value = 100;
          state.textContent = "";
          var link = el("a", "", number(job.calls_rebuilt) + " calls · open");
          link.href = job.url;
          state.append(link);
          resolve({ url: job.url, calls: job.calls_rebuilt });
          return;
        }
        if (job.state === "failed") { fail(job.error || "The ingest failed."); return; }
        show(job, bar, state);
        window.setTimeout(poll, POLL_MS);
      }
      function poll() {
        fetch(first.status_url, { credentials: "same-origin", headers: { Accept: "application/json" } })
          .then(function (response) {
            if (!response.ok) throw new Error("HTTP " + response.status);
            return response.json();
          })
          .then(check)
          .catch(function (error) { fail("Lost track of the upload (" + error.message + ")."); });
      }
      check(first);
    });
  }

  window.LoopInspectorJobs = { follow: follow };
})();

// Loop Inspector page behaviour: theme switch, uploads with progress, keyboard moves.
(function () {
  "use strict";

  function setTheme(theme) {
    document.documentElement.setAttribute("data-theme", theme);
    try { localStorage.setItem("loop-inspector-theme", theme); } catch (e) { /* ignore */ }
    document.dispatchEvent(new CustomEvent("themechange", { detail: theme }));
  }
  function toggleTheme() {
    var current = document.documentElement.getAttribute("data-theme");
    setTheme(current === "dark" ? "light" : "dark");
  }
  var toggle = document.getElementById("theme-toggle");
  if (toggle) toggle.addEventListener("click", toggleTheme);

  document.addEventListener("keydown", function (event) {
    var tag = (event.target && event.target.tagName) || "";
    if (event.ctrlKey || event.metaKey || event.altKey || /INPUT|SELECT|TEXTAREA/.test(tag)) return;
    var link = null;
    if (event.key === "j") link = document.getElementById("next-call");
    if (event.key === "k") link = document.getElementById("prev-call");
    if (event.key === "t") { toggleTheme(); return; }
    if (event.key === "[") link = document.getElementById("window-prev");
    if (event.key === "]") link = document.getElementById("window-next");
    // A click, not a navigation: a script may move the diagram's window in place
    // (diagram_window.js); without one the link is followed as before.
    if (link && link.getAttribute("href")) { event.preventDefault(); link.click(); }
  });

  // "Copy for an agent": the post-mortem's Markdown summary on the clipboard.
  var copy = document.getElementById("copy-markdown");
  if (copy) {
    copy.addEventListener("click", function () {
      var state = document.getElementById("copy-state");
      fetch(copy.dataset.source, { credentials: "same-origin" })
        .then(function (reply) { return reply.text(); })
        .then(function (text) { return navigator.clipboard.writeText(text).then(function () { return text; }); })
        .then(function (text) { if (state) state.textContent = "Copied " + text.length.toLocaleString() + " characters of Markdown."; })
        .catch(function () { if (state) state.textContent = "Could not use the clipboard: open the Markdown link instead."; });
    });
  }

  // Copy a secret shown once (a new API token or share link) to the clipboard.
  Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.dataset.copy);
      if (!source) return;
      navigator.clipboard.writeText(source.textContent.trim()).then(
        function () { button.textContent = "Copied"; },
        function () { button.textContent = "Select and copy it"; }
      );
    });
  });

  // Diagram controls submit as soon as a choice changes.
  Array.prototype.forEach.call(document.querySelectorAll("select[data-autosubmit]"), function (select) {
    select.addEventListener("change", function () {
      var start = select.form.querySelector("input[name=start]");
      if (start && select.name !== "spacing") start.value = "1";
      // requestSubmit fires "submit", so a script may show the choice in place.
      if (select.form.requestSubmit) select.form.requestSubmit(); else select.form.submit();
    });
  });

  var form = document.getElementById("upload-form");
  if (!form) return;
  var input = form.querySelector("input[type=file]");
  var list = document.getElementById("upload-progress");
  var formatSelect = form.querySelector("select[name=format]");
  var labelsInput = form.querySelector("input[name=labels]");
  var setInput = form.querySelector("input[name=set]");
  var projectSelect = form.querySelector("select[name=project]");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;  // textContent: never HTML
    return node;
  }

  // One large file goes to POST /api/jobs (ingested in the background, its job followed);
  // several files, a mapping or a run set stay on the synchronous endpoints.
  function inBackground(files, hasMapping) {
    var threshold = Number(form.dataset.backgroundBytes || 0);
    return Boolean(form.dataset.jobsApi) && threshold > 0 && files.length === 1 && !hasMapping && files[0].size > threshold;
  }

  function uploadOne(files) {
    files = Array.prototype.slice.call(files.length === undefined ? [files] : files);
    return new Promise(function (resolve) {
      var row = el("li");
      var label = el("span", "", files.map(function (f) { return f.name; }).join(" + "));
      var state = el("span", "muted small", "0%");
      var bar = el("progress");
      bar.max = 100; bar.value = 0;
      bar.setAttribute("aria-label", "Upload of " + label.textContent);
      row.append(label, state, bar);
      list.append(row);
      var data = new FormData();
      files.forEach(function (file) { data.append("file", file, file.name); });
      if (formatSelect && formatSelect.value) data.append("format", formatSelect.value);
      if (labelsInput && labelsInput.value.trim()) data.append("labels", labelsInput.value);
      var setName = setInput ? setInput.value.trim() : "";
      if (setName) data.append("name", setName);
      if (projectSelect && projectSelect.value) data.append("project", projectSelect.value);
      var mappingInput = form.querySelector("input[name=mapping]");
      if (mappingInput && mappingInput.files.length) data.append("mapping", mappingInput.files[0]);
      var hasMapping = Boolean(mappingInput && mappingInput.files.length);
      var xhr = new XMLHttpRequest();
      xhr.open("POST", setName ? form.dataset.setsApi : inBackground(files, hasMapping) ? form.dataset.jobsApi : form.dataset.api);
      xhr.upload.addEventListener("progress", function (event) {
        if (!event.lengthComputable) return;
        var percent = Math.round((event.loaded / event.total) * 100);
        bar.value = percent;
        state.textContent = percent < 100 ? percent + "%" : "analysing…";
      });
      xhr.addEventListener("load", function () {
        var body = null;
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
        if (setName && body && body.added) {
          // A run set: one line for the set, what was added, kept out and refused.
          bar.remove();
          state.textContent = "";
          var setLink = el("a", "", body.added.length + " run" + (body.added.length === 1 ? "" : "s") + " added · open the set");
          setLink.href = body.url;
          state.append(setLink);
          if (body.duplicates.length) row.append(el("p", "muted small", "Already in the set: " + body.duplicates.join(", ")));
          body.rejected.forEach(function (item) { row.append(el("p", "error-text", item.file + ": " + item.error)); });
          resolve(xhr.status === 201 ? { url: body.url } : null);
          return;
        }
        if (xhr.status === 202 && body && body.status_url && window.LoopInspectorJobs) {
          // A large upload: ingested in the background; follow its job.
          window.LoopInspectorJobs.follow(body, row, bar, state, el).then(resolve);
          return;
        }
        if (xhr.status === 201 && body) {
          bar.value = 100;
          state.textContent = "";
          var link = el("a", "", body.calls + " calls · open");
          link.href = body.url;
          state.append(link);
          resolve(body);
        } else {
          bar.remove();
          state.textContent = "failed";
          row.append(el("p", "error-text", (body && body.error) || "Upload failed (HTTP " + xhr.status + ")."));
          resolve(null);
        }
      });
      xhr.addEventListener("error", function () {
        state.textContent = "failed";
        row.append(el("p", "error-text", "The connection failed during the upload."));
        resolve(null);
      });
      xhr.send(data);
    });
  }

  function uploadAll(files) {
    if (!files || !files.length) return;
    list.textContent = "";
    var together = document.getElementById("id_together");
    var asSet = setInput && setInput.value.trim();
    var jobs = asSet || (together && together.checked && files.length > 1)
      ? [uploadOne(files)]
      : Array.prototype.map.call(files, function (file) { return uploadOne([file]); });
    Promise.all(jobs).then(function (results) {
      var done = results.filter(Boolean);
      if (jobs.length === 1 && done.length === 1) window.location.href = done[0].url;
    });
  }

  input.addEventListener("change", function () { uploadAll(input.files); });
  form.addEventListener("submit", function (event) {
    if (!input.files.length) return;
    event.preventDefault();
    uploadAll(input.files);
  });
  ["dragenter", "dragover"].forEach(function (name) {
    form.addEventListener(name, function (event) { event.preventDefault(); form.classList.add("dragging"); });
  });
  ["dragleave", "drop"].forEach(function (name) {
    form.addEventListener(name, function (event) { event.preventDefault(); form.classList.remove("dragging"); });
  });
  form.addEventListener("drop", function (event) { uploadAll(event.dataTransfer.files); });
})();

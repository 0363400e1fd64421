/* Domains dashboard: copy buttons and live status. Plain JavaScript, no build step.
 *
 * Live status: an element with data-status-url polls that JSON endpoint while a
 * check or a certificate is under way. The JSON carries a "fingerprint" of what
 * the page shows; when it differs from the one the page was rendered with, the
 * page reloads, so the server-rendered HTML stays the single source of truth.
 */
(function () {
  "use strict";

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "absolute";
    area.style.left = "-9999px";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } finally { document.body.removeChild(area); }
    return Promise.resolve();
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy]");
    if (!button) return;
    event.preventDefault();
    copyText(button.getAttribute("data-copy")).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      button.classList.add("copied");
      setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 1500);
    });
  });

  function startLiveStatus(box) {
    var url = box.getAttribute("data-status-url");
    var fingerprint = box.getAttribute("data-fingerprint");
    var started = Date.now();
    function delay() {
      // Quick at first (a check usually answers within seconds), then gentler.
      return Date.now() - started < 120000 ? 2000 : 10000;
    }
    function poll() {
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (response) {
          if (response.status === 404) { window.location.reload(); return null; }
          return response.ok ? response.json() : null;
        })
        .then(function (data) {
          if (!data) { setTimeout(poll, delay()); return; }
          if (data.fingerprint !== fingerprint) { window.location.reload(); return; }
          if (data.live) setTimeout(poll, delay());
          else box.hidden = true;
        })
        .catch(function () { setTimeout(poll, delay()); });
    }
    setTimeout(poll, delay());
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-status-url]").forEach(startLiveStatus);
  });
})();

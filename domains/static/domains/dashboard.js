/* Domains dashboard: copy buttons, live status, menus, table labels and focus. Plain
 * JavaScript, no build step.
 *
 * Live status: an element with data-status-url polls that JSON endpoint while a
 * check or a certificate is under way. The JSON carries a "fingerprint" of what
 * the page shows; when it differs from the one the page was rendered with, the
 * page reloads, so the server-rendered HTML stays the single source of truth. The
 * focus is put back where the person had it, and the new status is read out.
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
      button.textContent = document.body.getAttribute("data-copied") || "Copied";
      button.classList.add("copied");
      setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 1500);
    });
  });

  // Where the focus was before the status reloaded the page: the element's id, or what it
  // is (its tag, link, name and text) and which of the page's elements alike it was.
  var FOCUS_KEY = "petstore.dashboard.focus";
  var FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";

  function signature(element) {
    return [element.tagName, element.getAttribute("href") || "", element.getAttribute("name") || "",
            element.textContent.trim()].join("|");
  }

  function alike(wanted) {
    return Array.prototype.filter.call(document.querySelectorAll(FOCUSABLE), function (element) {
      return signature(element) === wanted;
    });
  }

  function rememberFocus(news) {
    var focused = document.activeElement;
    var saved = { path: window.location.pathname, news: news || "", id: "", signature: "", nth: 0 };
    if (focused && focused !== document.body) {
      saved.id = focused.id;
      saved.signature = signature(focused);
      saved.nth = alike(saved.signature).indexOf(focused);
    }
    try { sessionStorage.setItem(FOCUS_KEY, JSON.stringify(saved)); } catch (e) { /* private mode */ }
  }

  function restoreFocus() {
    var saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(FOCUS_KEY) || "null");
      sessionStorage.removeItem(FOCUS_KEY);
    } catch (e) { return false; }
    if (!saved || saved.path !== window.location.pathname) return false;
    var announce = document.getElementById("status-announce");
    if (announce && saved.news) {
      // A live region speaks a change, not what it held at load: filled a moment later.
      setTimeout(function () { announce.textContent = saved.news; }, 500);
    }
    if (!saved.id && !saved.signature) return true;
    var target = saved.id ? document.getElementById(saved.id) : alike(saved.signature)[saved.nth];
    // What had the focus may be gone (a message shown once): the page's content has it then.
    (target || document.getElementById("content")).focus({ preventScroll: true });
    return true;
  }

  function reloadKeepingFocus(news) {
    rememberFocus(news);
    window.location.reload();
  }

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
          if (response.status === 404) { reloadKeepingFocus(); return null; }
          return response.ok ? response.json() : null;
        })
        .then(function (data) {
          if (!data) { setTimeout(poll, delay()); return; }
          if (data.fingerprint !== fingerprint) {
            reloadKeepingFocus(data.state_label + ": " + data.state_help);
            return;
          }
          if (data.live) setTimeout(poll, delay());
          else box.hidden = true;
        })
        .catch(function () { setTimeout(poll, delay()); });
    }
    setTimeout(poll, delay());
  }

  // A table's cells named by their column's header, for the narrow layout that stacks them.
  function labelCells(table) {
    var headers = table.querySelectorAll("thead th");
    table.querySelectorAll("tbody tr").forEach(function (row) {
      var column = 0;
      Array.prototype.forEach.call(row.cells, function (cell) {
        var header = headers[column];
        var label = header ? header.textContent.trim() : "";
        if (label && cell.colSpan === 1 && !cell.hasAttribute("data-label")) {
          cell.setAttribute("data-label", label);
        }
        column += cell.colSpan;
      });
    });
  }

  // The ⋯ menus (<details class="menu">) close on Escape, giving the focus back to their
  // button, and on a click anywhere outside them.
  function openMenus() {
    return Array.prototype.slice.call(document.querySelectorAll("details.menu[open]"));
  }
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    openMenus().forEach(function (menu) {
      var hadFocus = menu.contains(document.activeElement);
      menu.open = false;
      if (hadFocus) menu.querySelector("summary").focus();
    });
  });
  document.addEventListener("click", function (event) {
    openMenus().forEach(function (menu) {
      if (!menu.contains(event.target)) menu.open = false;
    });
  });

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table").forEach(labelCells);
    var restored = restoreFocus();
    // After an action the page says what happened: the focus goes to that message, so it is
    // read out and the next Tab continues in the page's content, not at its top.
    var messages = document.querySelector(".messages");
    if (!restored && messages) messages.focus();
    document.querySelectorAll("[data-status-url]").forEach(startLiveStatus);
  });
})();

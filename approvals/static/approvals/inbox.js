// The staff inbox's lists refresh themselves (htmx, every few seconds), but not
// while staff are in the middle of a decision in one (a field in focus or filled
// in, a choice changed, a box ticked, a correction open): a refresh would wipe it.
// The check runs on htmx's cancellable htmx:beforeRequest, so no code is built
// from strings in the page (the Content-Security-Policy allows no eval).
(function () {
  "use strict";

  var REFRESHED = ["actions", "handoffs"];

  // Whether a list's choice is no longer the one the page came with (the first
  // option, when none is marked selected).
  function choiceChanged(select) {
    var initial = Array.prototype.findIndex.call(select.options, function (option) {
      return option.defaultSelected;
    });
    return select.selectedIndex !== Math.max(initial, 0);
  }

  function idle(list) {
    if (list.querySelector(":focus, input:checked, details[open]")) return false;
    var fields = list.querySelectorAll(
      "input:not([type=checkbox]):not([type=hidden]), textarea"
    );
    var filled = Array.prototype.some.call(fields, function (field) {
      return field.value !== "" && !field.closest("details");
    });
    return !filled && !Array.prototype.some.call(list.querySelectorAll("select"), choiceChanged);
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var list = event.detail.elt;
    if (REFRESHED.indexOf(list.id) !== -1 && event.detail.requestConfig &&
        event.detail.requestConfig.verb === "get" && !idle(list)) {
      event.preventDefault();
    }
  });

  // After each refresh, each request listed as waiting that was not listed
  // before (those of the first load are remembered, not announced) is told once:
  // to a screen reader, by the page's polite status line (#inbox-news, which
  // stays while the list around it is replaced whole); and, once staff allow
  // them, by a desktop notification, tagged with the request's id so the inbox
  // open in two tabs shows it once.
  var seen = null;

  function notifyNewRequests() {
    var rows = document.querySelectorAll("#actions tr[data-status=pending][data-request]");
    var first = seen === null;
    var allowed = "Notification" in window && Notification.permission === "granted";
    var arrived = [];
    seen = seen || {};
    Array.prototype.forEach.call(rows, function (row) {
      var id = row.getAttribute("data-request");
      if (seen[id]) return;
      seen[id] = true;
      if (first) return;
      arrived.push(row.getAttribute("data-title") + " — " + row.getAttribute("data-member"));
      if (!allowed) return;
      var notification = new Notification(row.getAttribute("data-title"), {
        body: row.getAttribute("data-member"),
        tag: id
      });
      notification.onclick = function () { window.focus(); };
    });
    var news = document.getElementById("inbox-news");
    if (news && arrived.length) {
      news.textContent = news.getAttribute("data-new-request") + ": " + arrived.join("; ");
    }
  }

  // The button that asks for the permission, while the browser has not been
  // asked; words instead when it was refused; nothing once allowed.
  function showPermission() {
    var offer = document.getElementById("desktop-notifications");
    if (!offer || !("Notification" in window)) return;
    offer.hidden = Notification.permission === "granted";
    offer.querySelector("button").hidden = Notification.permission !== "default";
    offer.querySelector("span").hidden = Notification.permission !== "denied";
  }

  document.addEventListener("click", function (event) {
    if (event.target.closest("#desktop-notifications button")) {
      Notification.requestPermission().then(showPermission);
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    showPermission();
    notifyNewRequests();
  });
  document.addEventListener("htmx:afterSettle", notifyNewRequests);
})();

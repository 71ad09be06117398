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
})();

// Gymnasia's chat widget for a gym's website, added with one tag:
//
//   <script src="https://GYMNASIA/widget.js" data-agent="PUBLIC_KEY"
//           data-identity-token="JWT from your back end, when a member is signed in"
//           async></script>
//
// It adds one iframe served by Gymnasia (the launcher button, and the chat panel once
// opened), so the page's styles and scripts cannot reach into the chat. The page may
// also call Gymnasia.identify(token) after signing a member in or out, and
// Gymnasia.open() / Gymnasia.close().
//
// The conversation is kept in this page's sessionStorage (first-party: no cookies),
// so it survives a reload of the page; a different member starts a new one.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || window.Gymnasia) return;
  var agent = script.getAttribute("data-agent");
  if (!agent) {
    if (window.console) console.error("Gymnasia widget: the script tag needs data-agent.");
    return;
  }
  var origin = new URL(script.src, window.location.href).origin;
  var identityToken = script.getAttribute("data-identity-token") || null;
  var storageKey = "gymnasia-widget:" + agent;
  var frame = document.createElement("iframe");
  var isOpen = false;
  var badge = false;  // the closed launcher shows a count of new messages

  // Who the identity token names (read, not verified: Gymnasia verifies it), so a
  // conversation kept for one member is never reopened for another.
  function subject(token) {
    if (!token) return "";
    try {
      var part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      return String(JSON.parse(atob(part + "===".slice((part.length + 3) % 4))).sub || "?");
    } catch (error) {
      return "?";
    }
  }

  function stored() {
    try {
      var kept = JSON.parse(window.sessionStorage.getItem(storageKey) || "null");
      return kept && kept.who === subject(identityToken) ? kept : null;
    } catch (error) {
      return null;
    }
  }

  function store(kept) {
    try {
      if (kept) window.sessionStorage.setItem(storageKey, JSON.stringify(kept));
      else window.sessionStorage.removeItem(storageKey);
    } catch (error) { /* storage may be disabled: the conversation lasts the page */ }
  }

  function post(message) {
    if (frame.contentWindow) frame.contentWindow.postMessage(message, origin);
  }

  // Closed, the iframe is the round launcher's own box, rounded like it (and, while
  // the launcher shows a count of new messages, that badge's corner too): an iframe
  // takes every click in its box, transparent or not, and the gym's page around the
  // button must stay clickable. The launcher's shadow is drawn here, outside it.
  function layout(open) {
    var phone = window.matchMedia("(max-width: 480px)").matches;
    var style = frame.style;
    if (open && phone) {
      style.width = "100vw";
      style.height = "100%";
    } else if (open) {
      style.width = "min(400px, calc(100vw - 24px))";
      style.height = "min(640px, calc(100% - 24px))";
    } else {
      style.width = badge ? "60px" : "56px";
      style.height = badge ? "60px" : "56px";
    }
    style.right = open ? (phone ? "0" : "12px") : (badge ? "12px" : "16px");
    style.bottom = open ? (phone ? "0" : "12px") : "16px";
    // The launcher's circle is centred 28px from the box's left and bottom edges.
    style.borderRadius = open ? "" : badge ? "28px 0 32px 28px / 32px 0 28px 28px" : "50%";
    style.filter = open ? "" : "drop-shadow(0 4px 14px rgba(0, 0, 0, .25))";
    // Over the whole page, the panel is modal (it keeps the focus inside).
    post({ type: "gymnasia:fullscreen", full: open && phone });
  }

  window.addEventListener("message", function (event) {
    if (event.source !== frame.contentWindow || event.origin !== origin) return;
    var data = event.data || {};
    if (data.type === "gymnasia:ready") {
      var kept = stored();
      post({
        type: "gymnasia:init",
        identityToken: identityToken,
        // A visitor is answered in the page's language (else the browser's).
        language: document.documentElement.lang || navigator.language || "",
        session: kept ? kept.session : null,
        open: Boolean(kept && kept.open)
      });
    } else if (data.type === "gymnasia:session") {
      store({ who: subject(identityToken), session: data.session, open: isOpen });
    } else if (data.type === "gymnasia:forget") {
      store(null);
    } else if (data.type === "gymnasia:layout") {
      isOpen = Boolean(data.open);
      layout(isOpen);
      var current = stored();
      if (current) {
        current.open = isOpen;
        store(current);
      }
    } else if (data.type === "gymnasia:badge") {
      badge = Boolean(data.shown);
      layout(isOpen);
    } else if (data.type === "gymnasia:title") {
      frame.title = String(data.title || "Chat");
    }
  });

  frame.src = origin + "/widget/" + encodeURIComponent(agent) + "/";
  frame.title = "Chat";
  frame.setAttribute("data-gymnasia-widget", agent);
  var style = frame.style;
  style.position = "fixed";
  style.border = "0";
  style.zIndex = "2147483000";
  style.background = "transparent";
  style.colorScheme = "light";
  style.maxWidth = "100vw";
  style.maxHeight = "100%";
  layout(false);
  window.addEventListener("resize", function () { layout(isOpen); });

  function mount() { document.body.appendChild(frame); }
  if (document.body) mount();
  else document.addEventListener("DOMContentLoaded", mount);

  window.Gymnasia = {
    identify: function (token) {
      var before = subject(identityToken);
      identityToken = token || null;
      // A renewed token of the same member keeps the conversation; another member,
      // or signing out, starts a new one: the panel is told which.
      post({
        type: "gymnasia:identify",
        identityToken: identityToken,
        otherMember: subject(identityToken) !== before
      });
    },
    open: function () { post({ type: "gymnasia:open", open: true }); },
    close: function () { post({ type: "gymnasia:open", open: false }); }
  };
})();

// The chat panel inside the widget's iframe: a client of the conversation API v1.
//
// The gym's page (widget.js) hands over, by postMessage, the member's identity token
// and the conversation it kept from before a reload; the bearer token lives in this
// page's memory only. Replies stream as server-sent events (delta, discard, message,
// error, done); messages that arrive later (an approval decided, a handoff settled)
// are read by polling the history after the last message shown.
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("widget-config").textContent);
  var language = config.language;
  var pageLanguage = "";  // the language of the gym's page the widget is on
  var S = config.strings[language];
  var $ = function (id) { return document.getElementById(id); };
  var launcher = $("launcher"), panel = $("panel"), closeButton = $("close");
  var log = $("log"), logRegion = $("log-region"), live = $("live"), typing = $("typing"), typingText = $("typing-text");
  var alertBox = $("alert"), form = $("composer"), input = $("text"), sendButton = $("send");
  var unreadBadge = $("unread"), conversationBox = $("conversation");

  var parentOrigin = null;   // the gym's page, learned from its first message
  var identityToken = null;  // the gym's signed statement of who the member is
  var session = null;        // {conversation, token, expires_at, member, seen}
  var shown = {};            // the log's element of each message id shown
  var count = 0;             // how many messages are in the log
  var lastId = null;         // the newest message read from the history, for ?after=
  var busy = false;          // a turn is streaming (polling waits)
  var loading = null;        // the history kept from before a reload, being read
  var isOpen = false;
  var fullScreen = false;    // the gym's page shows the open panel over all of it
  var unread = 0;
  var initialized = false;
  var refused = false;       // the identity token was refused: nothing is sent
  var putBack = null;        // a message's text put back in the box, not known to have arrived

  $("greeting").textContent = S.greeting;
  $("older-messages").textContent = S.older_messages;

  // ---- talking to the gym's page ------------------------------------------------

  function tellParent(message) {
    if (parentOrigin) window.parent.postMessage(message, parentOrigin);
  }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    if (config.origins.indexOf(event.origin) === -1) return;
    var data = event.data || {};
    if (data.type === "gymnasia:init" && !initialized) {
      initialized = true;
      parentOrigin = event.origin;
      identityToken = typeof data.identityToken === "string" && data.identityToken ? data.identityToken : null;
      // Sent as Accept-Language when a conversation starts (only the characters
      // that header allows): a visitor is answered in the page's language.
      pageLanguage = typeof data.language === "string" && /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(data.language) ? data.language : "";
      tellParent({ type: "gymnasia:title", title: config.name });
      if (data.session && data.session.conversation && data.session.token) {
        session = data.session;
        speak(session.language);
        loadHistory();
      } else if (!identityToken && pageLanguage) {
        speak(pageLanguage.split("-")[0].toLowerCase());  // a visitor's, until the API says
      }
      if (data.open) setOpen(true, false);
    } else if (data.type === "gymnasia:identify" && parentOrigin) {
      var token = typeof data.identityToken === "string" && data.identityToken ? data.identityToken : null;
      if (token !== identityToken) {
        if (data.otherMember) forgetSession();  // the page read the token's member
        identityToken = token;
        refused = false;
        input.disabled = false;
        sendButton.disabled = busy;
        clearAlert();
        if (isOpen) ensureConversation();
      }
    } else if (data.type === "gymnasia:open" && parentOrigin) {
      setOpen(data.open !== false, true);
    } else if (data.type === "gymnasia:fullscreen" && parentOrigin) {
      fullScreen = Boolean(data.full);
      showModal();
    }
  });
  window.parent.postMessage({ type: "gymnasia:ready" }, "*");

  function rememberSession() {
    tellParent({ type: "gymnasia:session", session: session });
  }

  // Another member, or none, starts a new conversation in the agent's language;
  // the same member, whose conversation expired, goes on in theirs.
  function forgetSession(sameMember) {
    session = null;
    shown = {};
    count = 0;
    lastId = null;
    unread = 0;
    showUnread();
    showEarlier(null);
    // A message being sent stays: it goes on in the next conversation.
    Array.prototype.slice.call(log.children).forEach(function (item) {
      if (!item.classList.contains("sending")) log.removeChild(item);
    });
    if (!sameMember) speak(config.language);
    tellParent({ type: "gymnasia:forget" });
  }

  // The conversation can no longer be read (its token lasts 12 hours): the member
  // is told at once, in their language, and a new one starts (now if the panel is
  // open, which also asks again whether the gym's page still vouches for them).
  function expire(text) {
    forgetSession(true);
    showAlert(text);
    if (isOpen) ensureConversation();
  }

  // The panel's own words in the conversation's language, which the API names
  // (Content-Language): the member's when the gym has it, else the agent's.
  function speak(code) {
    if (!config.strings[code] || code === language) return;
    language = code;
    S = config.strings[code];
    document.documentElement.lang = code;
    $("greeting").textContent = S.greeting;
    $("older-messages").textContent = S.older_messages;
    closeButton.setAttribute("aria-label", S.close);
    logRegion.setAttribute("aria-label", S.conversation);
    $("text-label").textContent = S.placeholder;
    input.placeholder = S.placeholder;
    sendButton.textContent = S.send;
    if ($("offline-note")) $("offline-note").textContent = S.offline;
    showUnread();
  }

  // ---- opening and closing --------------------------------------------------------

  function setOpen(open, moveFocus) {
    isOpen = open;
    panel.hidden = !open;
    launcher.hidden = open;
    launcher.setAttribute("aria-expanded", String(open));
    tellParent({ type: "gymnasia:layout", open: open });
    if (open) {
      unread = 0;
      showUnread();
      markSeen();
      scrollDown();
      if (moveFocus) input.focus();
      ensureConversation();
    } else if (moveFocus) {
      launcher.focus();
    }
  }

  launcher.addEventListener("click", function () { setOpen(true, true); });
  closeButton.addEventListener("click", function () { setOpen(false, true); });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && isOpen) setOpen(false, true);
    if (event.key === "Tab" && isOpen && fullScreen) keepFocusInside(event);
  });

  // Over the whole screen (a phone), the open panel is modal: the gym's page
  // behind it cannot be seen, so neither assistive technology nor the Tab key
  // may reach it; Escape or the close button leave. Beside the page (a wider
  // screen), it is a dialog the member may tab out of, to the page.
  function showModal() {
    if (fullScreen) panel.setAttribute("aria-modal", "true");
    else panel.removeAttribute("aria-modal");
  }

  // Tab from the panel's last control goes to its first, Shift+Tab from the
  // first to the last (out of the iframe, the browser would go on to the page).
  function keepFocusInside(event) {
    var controls = Array.prototype.filter.call(
      panel.querySelectorAll("button, textarea, a[href], input, select, [tabindex]"),
      function (control) {
        return !control.disabled && control.tabIndex >= 0 && control.getClientRects().length > 0;
      }
    );
    if (!controls.length) return;
    var first = controls[0], last = controls[controls.length - 1];
    var at = document.activeElement;
    if (event.shiftKey && (at === first || !panel.contains(at))) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (at === last || !panel.contains(at))) {
      event.preventDefault();
      first.focus();
    }
  }

  function showUnread() {
    if (unreadBadge.hidden !== (unread === 0)) {
      tellParent({ type: "gymnasia:badge", shown: unread > 0 });  // its corner takes room
    }
    unreadBadge.hidden = unread === 0;
    unreadBadge.textContent = unread ? String(unread) : "";
    var words = (unread === 1 ? S.unread_one : S.unread_other).replace("%(count)s", unread);
    launcher.setAttribute("aria-label", unread ? S.open + " (" + words + ")" : S.open);
  }

  // ---- alerts and the typing indicator -------------------------------------------

  var alertUntilReply = false;  // the alert is over once a reply shows

  function showAlert(text, untilReply) {
    alertBox.textContent = text;
    alertBox.hidden = false;
    alertUntilReply = Boolean(untilReply);
  }

  function clearAlert() {
    alertBox.hidden = true;
    alertBox.textContent = "";
    alertUntilReply = false;
  }

  function showTyping(text) {
    typingText.textContent = text;
    typing.hidden = false;
    scrollDown();
  }

  function hideTyping() { typing.hidden = true; }

  function scrollDown() { conversationBox.scrollTop = conversationBox.scrollHeight; }

  // ---- safe Markdown: DOM nodes built from text, never parsed as HTML -------------

  var INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*)|(\[[^\]\n]+\]\((https?:\/\/[^\s)]+|mailto:[^\s)]+)\))/g;

  function appendInline(parent, text) {
    var at = 0, match, inline = new RegExp(INLINE.source, "g");  // own state: nested calls
    while ((match = inline.exec(text)) !== null) {
      if (match.index > at) parent.appendChild(document.createTextNode(text.slice(at, match.index)));
      var node;
      if (match[1]) {
        node = document.createElement("code");
        node.textContent = match[1].slice(1, -1);
      } else if (match[2]) {
        node = document.createElement("strong");
        appendInline(node, match[2].slice(2, -2));
      } else if (match[3]) {
        node = document.createElement("em");
        appendInline(node, match[3].slice(1, -1));
      } else {
        node = document.createElement("a");
        node.href = match[5];
        node.target = "_blank";
        node.rel = "noopener noreferrer nofollow";
        node.textContent = match[4].slice(1, match[4].indexOf("]("));
      }
      parent.appendChild(node);
      at = inline.lastIndex;
    }
    if (at < text.length) parent.appendChild(document.createTextNode(text.slice(at)));
  }

  var BULLET = /^\s*[-*•]\s+/, NUMBER = /^\s*\d+[.)]\s+/;

  // Paragraphs (a blank line apart, single line breaks kept) and bulleted or
  // numbered lists; inline code, bold, italics and http(s) links.
  function renderMarkdown(container, text) {
    var paragraph = null, list = null;
    text.replace(/\r\n/g, "\n").split("\n").forEach(function (line) {
      var kind = BULLET.test(line) ? "ul" : NUMBER.test(line) ? "ol" : null;
      if (!line.trim()) {
        paragraph = list = null;
      } else if (kind) {
        paragraph = null;
        if (!list || list.tagName.toLowerCase() !== kind) {
          list = document.createElement(kind);
          container.appendChild(list);
        }
        var item = document.createElement("li");
        appendInline(item, line.replace(kind === "ul" ? BULLET : NUMBER, ""));
        list.appendChild(item);
      } else {
        list = null;
        if (paragraph) {
          paragraph.appendChild(document.createElement("br"));
        } else {
          paragraph = document.createElement("p");
          container.appendChild(paragraph);
        }
        appendInline(paragraph, line);
      }
    });
  }

  // ---- messages ----------------------------------------------------------------------

  // How many of the conversation's messages the member has had in front of them,
  // kept with the session: after a reload, only the ones after them are new.
  function markSeen() {
    if (!session || session.seen === count) return;
    session.seen = count;
    rememberSession();
  }

  // The state a message shows: the fixed sentences of R10 lead an assistant's reply
  // when a request waits for staff, was not done, or could not be confirmed.
  function stateOf(message) {
    if (message.role !== "assistant") return null;
    var lead = message.text.split("\n\n")[0];
    var cases = ["not_confirmed", "not_done", "waits", "already_waits"];
    for (var i = 0; i < cases.length; i++) {
      var sentences = config.sentences[cases[i]] || [];
      for (var j = 0; j < sentences.length; j++) {
        // A request already with staff shows as one that waits.
        if (lead.indexOf(sentences[j]) !== -1) return cases[i] === "already_waits" ? "waits" : cases[i];
      }
    }
    return null;
  }

  function messageElement(message) {
    var item = document.createElement("li");
    item.className = "message role-" + message.role;
    item.dataset.id = message.id;
    item.dataset.role = message.role;
    var who = document.createElement("span");
    who.className = "visually-hidden";
    who.textContent = (message.role === "member" ? S.you : message.role === "notice" ? S.notice : S.assistant) + ": ";
    item.appendChild(who);
    var state = stateOf(message);
    if (state) {
      item.classList.add("state-" + state);
      item.dataset.state = state;
    }
    var body = document.createElement("div");
    body.className = "text";
    if (message.role === "member") {
      var paragraph = document.createElement("p");
      paragraph.style.whiteSpace = "pre-wrap";
      paragraph.textContent = message.text;
      body.appendChild(paragraph);
    } else {
      renderMarkdown(body, message.text);
      // R10's sentence leads the reply and is its state, said once: marked,
      // not repeated by a badge of its own.
      if (state && body.firstChild) body.firstChild.classList.add("state");
    }
    item.appendChild(body);
    return item;
  }

  // The member's own message, echoed while sending, becomes the stored one where
  // it stands (its id, no longer "sending"): the log is a live region, where a new
  // element in its place would be read out a second time. Its content is renewed
  // only if it reads differently (the panel's language changed meanwhile).
  function becomeStored(echo, message) {
    var stored = messageElement(message);
    echo.className = stored.className;
    Object.keys(stored.dataset).forEach(function (key) {
      echo.dataset[key] = stored.dataset[key];
    });
    if (echo.textContent !== stored.textContent) {
      while (echo.firstChild) echo.removeChild(echo.firstChild);
      while (stored.firstChild) echo.appendChild(stored.firstChild);
    }
    return echo;
  }

  // A message in the log: as `echoed` (the member's own, shown while sending),
  // else in front of `nextNode`, else last.
  function addMessage(message, echoed, nextNode) {
    if (shown[message.id]) return;
    count += 1;
    if (echoed && echoed.parentNode) {
      shown[message.id] = becomeStored(echoed, message);
    } else {
      shown[message.id] = messageElement(message);
      log.insertBefore(shown[message.id], nextNode || null);
    }
    if (message.role !== "member" && alertUntilReply) clearAlert();
    // A text put back after a lost connection is seen to have arrived (the history
    // shows it as a new message of the member's): the box no longer offers to send
    // it again, unless the member has changed it since.
    if (message.role === "member" && putBack !== null && message.text === putBack) {
      if (input.value === putBack) input.value = "";
      putBack = null;
    }
    if (isOpen) {
      markSeen();
    } else if (message.role !== "member" && count > session.seen) {
      unread += 1;
      showUnread();
    }
    scrollDown();
  }

  // ---- the API -----------------------------------------------------------------------

  function headers(extra) {
    var result = { "Content-Type": "application/json" };
    if (session) result.Authorization = "Bearer " + session.token;
    for (var key in extra) result[key] = extra[key];
    return result;
  }

  // The API's details are English for developers: the member reads the panel's words.
  function errorText(status) {
    if (status === 429) return S.rate_limited;
    if (status === 413) return S.too_long;
    if (status === 404) return S.not_found;
    return S.failed;
  }

  var starting = null;

  function ensureConversation() {
    if (session) return Promise.resolve(true);
    if (refused) return Promise.resolve(false);
    if (starting) return starting;
    var body = { agent: config.agent };
    if (identityToken) body.identity_token = identityToken;
    starting = fetch(config.api + "/conversations", {
      method: "POST",
      headers: headers(pageLanguage ? { "Accept-Language": pageLanguage } : {}),
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (response.status === 201) {
          session = data;
          session.seen = 0;
          session.language = response.headers.get("Content-Language") || config.language;
          speak(session.language);
          rememberSession();
          return true;
        }
        if (response.status === 401) {
          refused = true;
          input.disabled = true;
          sendButton.disabled = true;
          showAlert(S.identity_refused);
        } else {
          showAlert(errorText(response.status));
        }
        return false;
      });
    }).catch(function () {
      showAlert(S.failed);
      return false;
    }).then(function (ok) {
      starting = null;
      return ok;
    });
    return starting;
  }

  // The conversation kept from before a reload; a message the member writes
  // meanwhile waits for it (the turn's messages are newer than all of it).
  function loadHistory() {
    loading = fetchMessages(null, true).then(function (ok) {
      loading = null;
      if (!ok) expire(S.expired_conversation);
    });
    return loading;
  }

  // The whole history, read while this page may already show some of it or newer
  // messages (the member wrote before it came): each message goes in its place,
  // the older ones above.
  function mergeHistory(messages) {
    var next = log.firstChild;
    messages.forEach(function (message) {
      if (shown[message.id]) next = shown[message.id].nextSibling;
      else addMessage(message, null, next);
    });
  }

  // The history kept from before a reload is shown again, not read out again: the
  // log's region is live, whose additions a screen reader announces, so the
  // messages go into a new region and log that take its place whole (a live
  // region's first content is not announced). Messages added later are announced
  // as usual.
  function restoreHistory(messages) {
    if (!messages.length) return;
    var replaced = logRegion, replacedLog = log;
    logRegion = replaced.cloneNode(false);
    log = replacedLog.cloneNode(false);
    while (replacedLog.firstChild) log.appendChild(replacedLog.firstChild);
    mergeHistory(messages);
    logRegion.appendChild(log);
    replaced.parentNode.replaceChild(logRegion, replaced);
    scrollDown();
  }

  // ---- older pages of the history -------------------------------------------------

  var firstId = null;  // the oldest message shown, when older ones are left to read

  function showEarlier(oldest) {
    firstId = oldest;
    $("older-messages").hidden = !oldest;
  }

  // The page just before the oldest message shown, put above it in order.
  $("older-messages").addEventListener("click", function () {
    if (!session || !firstId) return;
    var url = config.api + "/conversations/" + encodeURIComponent(session.conversation) +
      "/messages?before=" + encodeURIComponent(firstId);
    fetch(url, { headers: headers({ Accept: "application/json" }) }).then(function (response) {
      if (!response.ok) return null;
      return response.json();
    }).then(function (data) {
      if (!data) return;
      var messages = data.messages || [];
      var oldest = shown[firstId];
      messages.forEach(function (message) { addMessage(message, null, oldest); });
      showEarlier(data.more && messages.length ? messages[0].id : null);
    }).catch(function () { showAlert(S.failed); });
  });

  // Messages after the last one read from the history (the newest page when none
  // has been); false when the conversation cannot be read. While a turn streams, what
  // is read is left for the next look, unless it is the history a message waits for.
  function fetchMessages(after, restoring) {
    if (!session) return Promise.resolve(false);
    var url = config.api + "/conversations/" + encodeURIComponent(session.conversation) + "/messages";
    if (after) url += "?after=" + encodeURIComponent(after);
    var asked = session;
    return fetch(url, { headers: headers({ Accept: "application/json" }) }).then(function (response) {
      if (response.status === 401 || response.status === 403) return false;
      if (!response.ok) return true;
      return response.json().then(function (data) {
        if (asked !== session || (busy && !restoring)) return true;
        // Only the history moves the cursor: a turn's streamed messages may come
        // after others added meanwhile (an approval's outcome), not yet read.
        var messages = data.messages || [];
        if (restoring) restoreHistory(messages);
        else if (after) messages.forEach(function (message) { addMessage(message); });
        else mergeHistory(messages);
        // The history read last comes as its newest page: older pages on request.
        if (!after) showEarlier(data.more && messages.length ? messages[0].id : null);
        if (messages.length) lastId = messages[messages.length - 1].id;
        // A page holds at most 50: what came later than it is the next page.
        if (after && data.more && messages.length) return fetchMessages(lastId, false);
        return true;
      });
    }).catch(function () { return true; });
  }

  function poll() {
    // Not while the history kept from before a reload is being read: that is this look.
    if (session && !busy && !loading && document.visibilityState !== "hidden") {
      fetchMessages(lastId).then(function (ok) {
        if (!ok && !busy) expire(S.expired_conversation);
      });
    }
  }
  window.setInterval(poll, config.poll_seconds * 1000);

  // ---- sending and streaming ---------------------------------------------------------

  function pendingEcho(text) {
    var element = messageElement({ id: "", role: "member", text: text });
    element.classList.add("sending");
    log.appendChild(element);
    scrollDown();
    return element;
  }

  function parseEvents(buffer, handle) {
    var parts = buffer.split("\n\n");
    var rest = parts.pop();
    parts.forEach(function (chunk) {
      var name = "message", data = "";
      chunk.split("\n").forEach(function (line) {
        if (line.indexOf("event:") === 0) name = line.slice(6).trim();
        else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
      });
      var payload = {};
      try { payload = data ? JSON.parse(data) : {}; } catch (ignored) { payload = {}; }
      handle(name, payload);
    });
    return rest;
  }

  function send(text) {
    busy = true;
    sendButton.disabled = true;
    clearAlert();
    putBack = null;
    var echo = pendingEcho(text);
    var streamed = "";
    return Promise.resolve(loading).then(function () {
      return ensureConversation();
    }).then(function (ok) {
      if (!ok) {
        echo.remove();
        input.value = text;
        return;
      }
      showTyping(S.typing);
      var url = config.api + "/conversations/" + encodeURIComponent(session.conversation) + "/messages";
      return fetch(url, {
        method: "POST",
        headers: headers({ Accept: "text/event-stream" }),
        body: JSON.stringify({ text: text })
      }).then(function (response) {
        if (!response.ok) {
          return response.text().catch(function () { return ""; }).then(function () {
            echo.remove();
            input.value = text;
            if (response.status === 401 || response.status === 403) {
              expire(S.expired);
            } else {
              showAlert(errorText(response.status));
            }
          });
        }
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        function handle(name, data) {
          if (name === "message") {
            if (data.role === "member") {
              addMessage(data, echo);
            } else {
              streamed = "";
              live.hidden = true;
              live.textContent = "";
              addMessage(data);
            }
          } else if (name === "delta") {
            hideTyping();
            streamed += data.text || "";
            live.textContent = streamed;
            live.hidden = false;
            scrollDown();
          } else if (name === "discard") {
            streamed = "";
            live.textContent = "";
            live.hidden = true;
            showTyping(S.working);
          } else if (name === "error" && data.error !== "assistant_unavailable") {
            showAlert(S.unfinished);
          }
        }
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) return;
            buffer = parseEvents(buffer + decoder.decode(chunk.value, { stream: true }), handle);
            return pump();
          });
        }
        return pump();
      }).catch(function () {
        if (!echo.dataset.id) input.value = putBack = text;  // it may not have arrived
        showAlert(S.connection_lost, true);  // the reply comes with the next look
      });
    }).then(function () {
      busy = false;
      sendButton.disabled = refused;
      hideTyping();
      live.hidden = true;
      live.textContent = "";
      if (echo.parentNode && !echo.dataset.id) echo.remove();
      poll();
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = input.value.trim();
    if (!text || busy || refused) return;
    // Counted as the API counts it (characters, not UTF-16 units); a longer text is
    // kept whole for the member to shorten, never cut off as a maxlength would.
    if (Array.from(text).length > config.max_length) {
      showAlert(S.too_long);
      return;
    }
    input.value = "";
    send(text).then(function () { input.focus(); });
  });

  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
})();

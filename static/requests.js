// Every htmx request that fails says so on the page: what happened and what to do.
// Without this a failed submit leaves the screen as it was, and the person cannot
// tell whether it was saved. Submissions are idempotent on the server (a repeat of
// the same form is recognised), so "send again" is always safe advice.
// The texts are translated by Django's JavaScript catalogue (base.html loads it
// first); each is one string literal so that makemessages reads it whole.
(function () {
  "use strict";

  const gettext = window.gettext || function (text) { return text; };
  const interpolate = window.interpolate || function (text, values, named) {
    return text.replace(/%\(\w+\)s/g, function (match) {
      return values[match.slice(2, -2)];
    });
  };

  function sendAgain() {
    return gettext("Sending the same thing again is safe: it is never counted twice.");
  }

  function problemFor(status) {
    if (status === 401) {
      return gettext("You are signed out, so this was not saved. Sign in again in another tab (what you typed here stays), then send again.");
    }
    if (status === 403) {
      return gettext("This was refused (error 403): you may have signed out in another tab, or your role changed. Reload the page to see what you may do now.");
    }
    if (status === 404) {
      return gettext("What this page was working on no longer exists (removed, or given to someone else). Reload the page to carry on.");
    }
    if (status === 413) {
      return gettext("What you sent is too large for the server. Shorten it and send again.");
    }
    return interpolate(
      gettext("The server failed while handling this (error %(status)s). It may or may not have been saved: reload the page to see where things stand."),
      { status: status },
      true
    ) + " " + sendAgain();
  }

  function banner() {
    return document.getElementById("request-problem");
  }

  function show(text) {
    const box = banner();
    if (!box) return;
    box.querySelector("[data-problem-text]").textContent = text;
    box.hidden = false;
  }

  document.addEventListener("htmx:responseError", function (event) {
    show(problemFor(event.detail.xhr.status));
  });

  document.addEventListener("htmx:sendError", function () {
    show(gettext("The connection to Assay was lost, so nothing was confirmed. Check your network, then send again.") + " " + sendAgain());
  });

  document.addEventListener("htmx:timeout", function () {
    show(gettext("Assay did not answer in time, so nothing was confirmed. Send again in a moment.") + " " + sendAgain());
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    const box = banner();
    if (box && event.detail.successful) box.hidden = true;
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-problem-dismiss]")) banner().hidden = true;
  });
})();

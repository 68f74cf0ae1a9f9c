// Keyboard-first queue screens. Every control that has a key carries `data-key`;
// this file maps key presses to them, times each task, and keeps htmx swapping the
// task partial (also on 400 answers, which carry a validation message).
(function () {
  "use strict";
  let startedAt = performance.now();
  let timedTask = null;

  function screen() {
    return document.getElementById("task");
  }

  function typing(target) {
    return target.closest("input[type=text], input:not([type]), textarea, select, [contenteditable]");
  }

  function openDialog(id) {
    const dialog = document.getElementById(id);
    if (!dialog) return;
    if (dialog.open) {
      dialog.close();
      return;
    }
    dialog.showModal();
    const field = dialog.querySelector("input[type=text], textarea");
    if (field) field.focus();
  }

  function activate(element) {
    if (element.matches("input[type=text], textarea")) {
      element.focus();
    } else if (element.matches("input[type=radio], input[type=checkbox]")) {
      element.checked = true;
      element.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (element.dataset.openDialog) {
      openDialog(element.dataset.openDialog);
    } else {
      element.click();
    }
  }

  // A submitter is clicked rather than passed to requestSubmit(): htmx includes
  // the clicked button's name=value (the review decision) in the request.
  function submitForm(form, submitter) {
    if (submitter) submitter.click();
    else if (form) form.requestSubmit();
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey || event.isComposing) return;
    const root = screen();
    if (!root) return;
    // Only an open dialog keeps keys to itself: focus can linger on a closed one
    // for a moment after Escape, and the next key must reach the screen.
    const inDialog = event.target.closest("dialog[open]");
    if (typing(event.target)) {
      if (event.key === "Escape" && !inDialog) event.target.blur();
      if (event.key === "Enter" && event.target.dataset.enterSubmits) {
        event.preventDefault();
        const form = event.target.form;
        submitForm(form, form.querySelector(event.target.dataset.enterSubmits));
        return;
      }
      // Ctrl+Enter submits from a text area (the inline translation editor).
      if (event.key === "Enter" && event.ctrlKey) {
        event.preventDefault();
        const form = event.target.form;
        submitForm(form, form && form.querySelector("[data-ctrl-enter]"));
      }
      return;
    }
    if (event.ctrlKey || inDialog) return;
    if (event.key === "Enter") {
      const form = root.querySelector("form[data-queue-form]:not([data-no-enter])");
      if (!form || event.target.closest("button, a")) return;
      event.preventDefault();
      submitForm(form, form.querySelector("[data-enter]"));
      return;
    }
    const key = event.key === "Backspace" ? "Backspace" : event.key;
    const target = root.querySelector('[data-key="' + CSS.escape(key) + '"]');
    if (target) {
      event.preventDefault();
      activate(target);
    }
  });

  // A closed dialog can keep focus on its close button; then Enter would "click"
  // that button instead of submitting the task. Give the focus back to the page.
  // ("close" does not bubble: listen in the capture phase.)
  document.addEventListener(
    "close",
    function (event) {
      const active = document.activeElement;
      if (event.target.matches("dialog") && active && event.target.contains(active)) {
        active.blur();
      }
    },
    true
  );

  document.addEventListener("click", function (event) {
    const opener = event.target.closest("[data-open-dialog]");
    if (opener) {
      event.preventDefault();
      openDialog(opener.dataset.openDialog);
    }
    const closer = event.target.closest("[data-close-dialog]");
    if (closer) closer.closest("dialog").close();
    const toggle = event.target.closest("[data-show-lang]");
    if (toggle) showLanguage(toggle.closest("[data-langs]"), toggle.dataset.showLang);
  });

  function showLanguage(box, language) {
    box.querySelectorAll("[data-lang]").forEach(function (panel) {
      panel.hidden = panel.dataset.lang !== language;
    });
    box.querySelectorAll("[data-show-lang]").forEach(function (tab) {
      tab.setAttribute("aria-pressed", tab.dataset.showLang === language);
    });
  }

  // "l" cycles the question's languages on the adjudication screen.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "l" || typing(event.target) || event.ctrlKey || event.metaKey) return;
    const box = document.querySelector("#task [data-langs]");
    if (!box) return;
    const tabs = Array.from(box.querySelectorAll("[data-show-lang]"));
    const current = tabs.findIndex((tab) => tab.getAttribute("aria-pressed") === "true");
    showLanguage(box, tabs[(current + 1) % tabs.length].dataset.showLang);
  });

  document.addEventListener("htmx:configRequest", function (event) {
    if (event.detail.verb === "post") {
      event.detail.parameters.elapsed_ms = Math.round(performance.now() - startedAt);
    }
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.status === 400) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    const root = screen();
    if (!root) return;
    // Time the task from the moment it is first shown; a rejected submission
    // re-renders the same task and keeps its clock.
    if (root.dataset.task !== timedTask) {
      startedAt = performance.now();
      timedTask = root.dataset.task;
    }
    if (document.activeElement && document.activeElement !== document.body) {
      document.activeElement.blur();
    }
    window.scrollTo({ top: 0 });
  });

  // The reviewer's editor, reject reason and approve confirmation open in place. A
  // panel's disabled fields (the confirmation's acknowledgement) are sent only once
  // it has been opened.
  document.addEventListener("click", function (event) {
    const opener = event.target.closest("[data-reveal]");
    if (!opener) return;
    event.preventDefault();
    const panel = document.getElementById(opener.dataset.reveal);
    panel.hidden = false;
    panel.querySelectorAll("input[disabled]").forEach(function (input) {
      input.disabled = false;
    });
    const field = panel.querySelector("[data-autofocus], textarea, input[type=text]");
    if (field) field.focus();
  });

  const first = screen();
  if (first) timedTask = first.dataset.task;
})();

// Keyboard-first queue screens. Every control that has a key carries `data-key`;
// this file maps key presses to them, times each task, and keeps htmx swapping the
// task partial (also on 400 answers, which carry a validation message).
//
// The keyboard contract of every review screen:
// - while a text field is focused, a dialog is open or a panel with a text field
//   (a reason, an editor) is open, no shortcut fires: a key pressed with the
//   focus elsewhere goes into the open panel's field; Esc closes the panel;
// - a refused submit (a 400 answer on the same task) reopens the panels that were
//   open, with their text, and gives the focus back to the field that had it;
// - what the server renders after a refusal is what is saved now (the screens
//   never re-select a refused stale choice).
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

  // The panels opened in place (reject reason, editor, confirmation) that hold a
  // text field, and are open now.
  function openPanels(root) {
    return Array.from(root.querySelectorAll("[data-reveal]"))
      .map((opener) => document.getElementById(opener.dataset.reveal))
      .filter((panel, index, all) => panel && !panel.hidden && all.indexOf(panel) === index);
  }

  function textField(panel) {
    return panel.querySelector("textarea, input[type=text], input:not([type])");
  }

  function closePanel(panel) {
    panel.hidden = true;
    panel.querySelectorAll("[data-enabled-on-reveal]").forEach(function (input) {
      input.disabled = true;
    });
  }

  function revealPanel(panel) {
    panel.hidden = false;
    panel.querySelectorAll("input[disabled]").forEach(function (input) {
      input.disabled = false;
      input.dataset.enabledOnReveal = "";
    });
  }

  // The element a key is for. Focus can linger on a closed dialog's button after
  // Escape until the browser moves it, in a task of its own that keys typed
  // quickly (or on a busy machine) overtake: such a key is for the screen, and
  // Enter must submit the task rather than "click" the hidden button.
  function keyTarget(event) {
    if (event.target.closest("dialog:not([open])")) {
      event.target.blur();
      return document.body;
    }
    return event.target;
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey || event.isComposing) return;
    const root = screen();
    if (!root) return;
    const target = keyTarget(event);
    const inDialog = target.closest("dialog[open]");
    if (typing(target)) {
      const panel = openPanels(root).find((open) => open.contains(target));
      if (event.key === "Escape" && !inDialog) {
        if (panel) closePanel(panel);
        target.blur();
      }
      if (event.key === "Enter" && target.dataset.enterSubmits) {
        event.preventDefault();
        const form = target.form;
        submitForm(form, form.querySelector(target.dataset.enterSubmits));
        return;
      }
      // Ctrl+Enter submits from a text area (the inline translation editor).
      if (event.key === "Enter" && event.ctrlKey) {
        event.preventDefault();
        const form = target.form;
        submitForm(form, form && form.querySelector("[data-ctrl-enter]"));
      }
      return;
    }
    if (event.ctrlKey || inDialog || document.querySelector("dialog[open]")) return;
    // A panel with a text field is open but the focus went elsewhere (a click, a
    // swap): the key belongs to the field, never to a shortcut.
    const open = openPanels(root).filter(textField);
    if (open.length) {
      if (event.key === "Escape") {
        open.forEach(closePanel);
        event.preventDefault();
        return;
      }
      const field = textField(open[open.length - 1]);
      if (event.key === "Enter" || event.key === "Backspace") event.preventDefault();
      // Focusing during keydown sends the typed character to the field.
      field.focus();
      return;
    }
    if (event.key === "Enter") {
      const form = root.querySelector("form[data-queue-form]:not([data-no-enter])");
      if (!form || target.closest("button, a")) return;
      event.preventDefault();
      submitForm(form, form.querySelector("[data-enter]"));
      return;
    }
    const key = event.key === "Backspace" ? "Backspace" : event.key;
    const control = root.querySelector('[data-key="' + CSS.escape(key) + '"]');
    if (control) {
      event.preventDefault();
      activate(control);
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
    if (document.querySelector("dialog[open]")) return;
    const root = screen();
    if (root && openPanels(root).some(textField)) return;
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

  // What a refused submit must not lose: the open panels, every text typed on the
  // screen and the field that had the focus.
  let typed = null;

  function snapshot(root) {
    const fields = {};
    root.querySelectorAll("textarea[name], input[type=text][name], input:not([type])[name]")
      .forEach(function (field) {
        if (!field.closest("dialog")) fields[field.name] = field.value;
      });
    const active = document.activeElement;
    return {
      task: root.dataset.task,
      panels: openPanels(root).map((panel) => panel.id),
      fields: fields,
      focused: active && root.contains(active) && typing(active) ? active.name : null,
    };
  }

  function restore(root, state) {
    state.panels.forEach(function (id) {
      const panel = document.getElementById(id);
      if (panel && root.contains(panel)) revealPanel(panel);
    });
    Object.keys(state.fields).forEach(function (name) {
      const field = root.querySelector('[name="' + CSS.escape(name) + '"]:not([type=hidden])');
      if (field && field.matches("textarea, input[type=text], input:not([type])")) {
        field.value = state.fields[name];
      }
    });
    const open = openPanels(root).filter(textField);
    const focus = (state.focused &&
      root.querySelector('[name="' + CSS.escape(state.focused) + '"]:not([type=hidden])')) ||
      (open.length && textField(open[open.length - 1]));
    if (focus) {
      focus.focus();
      if (focus.setSelectionRange && typeof focus.value === "string") {
        focus.setSelectionRange(focus.value.length, focus.value.length);
      }
    }
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    const root = screen();
    typed = root && event.detail.xhr.status === 400 ? snapshot(root) : null;
    if (event.detail.xhr.status === 400) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    const root = screen();
    if (!root) return;
    const refused = typed;
    typed = null;
    // Time the task from the moment it is first shown; a rejected submission
    // re-renders the same task and keeps its clock.
    if (root.dataset.task !== timedTask) {
      startedAt = performance.now();
      timedTask = root.dataset.task;
    }
    if (document.activeElement && document.activeElement !== document.body) {
      document.activeElement.blur();
    }
    markShortcuts(root);
    // Refused on the same task: the screen is what is saved now, and the person's
    // open panels, text and focus come back.
    if (refused && refused.task === root.dataset.task) {
      restore(root, refused);
      return;
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
    revealPanel(panel);
    const field = panel.querySelector("[data-autofocus], textarea, input[type=text]");
    if (field) field.focus();
  });

  // Every key is announced with the control it works: screen readers read
  // aria-keyshortcuts out with the control's name.
  function markShortcuts(root) {
    root.querySelectorAll("[data-key]").forEach(function (control) {
      control.setAttribute("aria-keyshortcuts", control.dataset.key);
    });
  }

  const first = screen();
  if (first) {
    markShortcuts(first);
    timedTask = first.dataset.task;
    // A panel the server rendered open (a refusal shown as a whole page) has the
    // focus in its field.
    const open = openPanels(first).filter(textField);
    if (open.length) textField(open[open.length - 1]).focus();
  }
})();

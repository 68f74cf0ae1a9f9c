// What a person should hear when htmx changes the page: the texts marked
// `data-announce` (a work screen's counters) or `data-status` (a run's status) are
// copied, when they change, into the page's one live region (#announcer in
// base.html). htmx replaces the elements themselves, and a screen reader does not
// read a region that was just swapped in; it reads one that stays.
(function () {
  "use strict";
  const SPOKEN = "[data-announce], [data-status]";

  document.addEventListener("htmx:afterSettle", function () {
    const box = document.getElementById("announcer");
    if (!box) return;
    const text = Array.from(document.querySelectorAll(SPOKEN))
      .map((element) => element.textContent.replace(/\s+/g, " ").trim())
      .filter(Boolean)
      .join(". ");
    if (text && text !== box.textContent) box.textContent = text;
  });
})();

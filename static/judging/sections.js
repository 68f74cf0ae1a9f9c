// Report sections are <details>; a link to one (the report's section links, a shared
// URL with #capability) opens it before the browser scrolls there.
(function () {
  "use strict";

  function openTarget(hash) {
    const target = hash && document.getElementById(hash.slice(1));
    if (target && target.tagName === "DETAILS") target.open = true;
  }

  document.addEventListener("click", function (event) {
    const link = event.target.closest('a[href^="#"]');
    if (link) openTarget(link.getAttribute("href"));
  });
  window.addEventListener("hashchange", function () {
    openTarget(location.hash);
  });
  document.addEventListener("DOMContentLoaded", function () {
    openTarget(location.hash);
  });
})();

// The start form's prompt preset: choosing one selects its prompts in the other
// menus at once (the server fills the same ones in if this script does not run).
(function () {
  "use strict";

  document.addEventListener("change", function (event) {
    const preset = event.target.closest("select[data-presets]");
    if (!preset || !preset.value) return;
    const fields = JSON.parse(preset.dataset.presets)[preset.value] || {};
    Object.entries(fields).forEach(function ([name, value]) {
      const select = preset.form.elements.namedItem(name);
      if (select) select.value = String(value);
    });
  });
})();

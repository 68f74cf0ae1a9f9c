// Click a column header of a table.sortable to sort its rows (within each tbody, so
// category groups stay together). Cells carry their raw value in data-sort.
document.addEventListener("click", (event) => {
  const button = event.target.closest("table.sortable th button.sort");
  if (!button) return;
  const th = button.closest("th");
  const table = th.closest("table");
  const index = Array.from(th.parentNode.children).indexOf(th);
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  table.querySelectorAll("thead th").forEach((h) => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const key = (row) => {
    const raw = row.children[index]?.dataset.sort ?? "";
    const number = parseFloat(raw);
    return raw === "" ? null : Number.isNaN(number) ? raw.toLowerCase() : number;
  };
  table.querySelectorAll("tbody").forEach((body) => {
    const rows = Array.from(body.querySelectorAll("tr:not(.group-header)"));
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === null) return 1;
      if (y === null) return -1;
      const order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach((row) => body.appendChild(row));
  });
});

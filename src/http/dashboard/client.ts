/**
 * The dashboard's own script, served by assets.ts: what htmx does not do.
 * Forms (or submit buttons) marked `data-confirm` ask before they submit, and a `data-select-all`
 * checkbox ticks every checkbox named by its value.
 */
export const CLIENT_SCRIPT = `
document.addEventListener("submit", (event) => {
  const marked = [event.submitter, event.target].find((element) => element && element.hasAttribute && element.hasAttribute("data-confirm"));
  const question = marked && marked.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
}, true);
document.addEventListener("change", (event) => {
  const name = event.target.getAttribute && event.target.getAttribute("data-select-all");
  if (!name) return;
  for (const box of document.querySelectorAll('input[type=checkbox][name="' + name + '"]')) box.checked = event.target.checked;
});
`;

/**
 * The dashboard's own script, served by assets.ts: what htmx does not do.
 * - Forms (or submit buttons) marked `data-confirm` ask before they submit, and a `data-select-all`
 *   checkbox ticks every checkbox named by its value.
 * - A refreshing region marked `data-hold-while-checked` (components.tsx `Live`) does not refresh
 *   while a checkbox in it is ticked.
 * - Times (`<time datetime>`, components.tsx `Time`) come in UTC; each is shown in the browser's
 *   zone ("23:22:48 GMT+5:30", with the date when it is not today), the UTC time staying in its
 *   title. Its "ago" is counted from the service's clock (`data-now`, when the page was made)
 *   plus the time since, every 10 s, by `relativeTime` (domain/relative-time.ts) itself, its
 *   source put in the script, so the page says it in the words the server used.
 *   A region htmx swaps in (a list's refresh) is shown so at once (`htmx:afterSwap`).
 */
import { relativeTime } from "../../../domain/relative-time";

export const CLIENT_SCRIPT = `
${relativeTime.toString()}
document.addEventListener("submit", (event) => {
  const marked = [event.submitter, event.target].find((element) => element && element.hasAttribute && element.hasAttribute("data-confirm"));
  const question = marked && marked.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
}, true);
document.addEventListener("htmx:beforeRequest", (event) => {
  const region = event.detail && event.detail.elt;
  if (region && region.hasAttribute("data-hold-while-checked") && region.querySelector("input[type=checkbox]:checked")) event.preventDefault();
});
document.addEventListener("change", (event) => {
  const name = event.target.getAttribute && event.target.getAttribute("data-select-all");
  if (!name) return;
  for (const box of document.querySelectorAll('input[type=checkbox][name="' + name + '"]')) box.checked = event.target.checked;
});

(() => {
  const pad = (n) => String(n).padStart(2, "0");
  const zoneOf = (date) => {
    const part = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" }).formatToParts(date).find((p) => p.type === "timeZoneName");
    return part ? part.value : "";
  };
  const day = (date) => date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate());
  const local = (date) => {
    const clock = pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds());
    return (day(date) === day(new Date()) ? "" : day(date) + " ") + clock + " " + zoneOf(date);
  };
  // Each time's service clock, against the browser's when it arrived.
  const skews = new WeakMap();
  const show = (root) => {
    for (const time of root.querySelectorAll("time[datetime]")) {
      const at = new Date(time.getAttribute("datetime"));
      if (Number.isNaN(at.getTime())) continue;
      const shown = time.querySelector(".at");
      if (shown) shown.textContent = local(at);
      if (time.hasAttribute("data-now") && !skews.has(time)) skews.set(time, Number(time.getAttribute("data-now")) - Date.now());
    }
  };
  const tick = () => {
    for (const time of document.querySelectorAll("time[data-now]")) {
      const ago = time.querySelector(".ago");
      if (!ago || !skews.has(time)) continue;
      ago.textContent = "(" + relativeTime(new Date(time.getAttribute("datetime")).getTime(), Date.now() + skews.get(time)) + ")";
    }
  };
  const start = () => show(document);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  document.addEventListener("htmx:afterSwap", () => show(document));
  setInterval(tick, 10000);
})();
`;

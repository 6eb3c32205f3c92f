/**
 * The reference page's own script and style, served by assets.ts. The script
 * starts Swagger UI on the API document: grouped by tag in the document's
 * order, every operation listed, a search box over tags, paths, methods and
 * summaries, "try it" open at once against this server (the document's
 * `servers`), the token pasted once under "Authorize" and kept in this
 * browser's local storage. Nothing is fetched from elsewhere: no validator
 * badge, no fonts.
 */
export const REFERENCE_SCRIPT = `
const words = (phrase) => phrase.toLowerCase().split(/\\s+/).filter(Boolean);
/** Keeps the operations whose tag, method, path, summary or id hold every word searched for. */
const searchOperations = () => ({
  fn: {
    opsFilter: (taggedOperations, phrase) => {
      const wanted = words(typeof phrase === "string" ? phrase : "");
      if (wanted.length === 0) return taggedOperations;
      return taggedOperations
        .map((group, tag) => {
          const found = group.get("operations").filter((op) => {
            const text = [tag, op.get("method"), op.get("path"), op.getIn(["operation", "summary"]), op.getIn(["operation", "operationId"])].join(" ").toLowerCase();
            return wanted.every((word) => text.includes(word));
          });
          return found.size > 0 ? group.set("operations", found) : null;
        })
        .filter((group) => group !== null);
    },
  },
});
const root = document.getElementById("reference");
window.ui = SwaggerUIBundle({
  url: root.dataset.document,
  dom_id: "#reference",
  layout: "BaseLayout",
  plugins: [searchOperations],
  deepLinking: true,
  docExpansion: "list",
  filter: true,
  tryItOutEnabled: true,
  // The pasted token lives as long as the page: not kept in this browser's storage for anyone after.
  persistAuthorization: false,
  displayRequestDuration: true,
  defaultModelsExpandDepth: -1,
  validatorUrl: null,
  onComplete: () => {
    const search = document.querySelector(".operation-filter-input");
    if (search) search.setAttribute("placeholder", "Search: a resource, a path or what it does (e.g. schedules, retry)");
  },
});
`;

export const REFERENCE_STYLE = `
body{margin:0;font-family:system-ui,sans-serif}
.reference-bar{display:flex;gap:1.2rem;align-items:baseline;padding:.6rem 1.5rem;background:#1d2330;color:#fff;font-size:14px}
.reference-bar a{color:#cfe0ff}.reference-bar strong{font-size:16px}
.swagger-ui .filter-container{position:sticky;top:0;z-index:5;background:#fff;box-shadow:0 1px 0 #e4e8ef}
.swagger-ui .filter .operation-filter-input{margin:10px 0}
.swagger-ui .information-container .info{margin:24px 0 8px}
`;

/**
 * The browsable API reference: one HTML page rendered from the API document
 * (no script, no asset from elsewhere), operations grouped by tag, each with
 * its parameters, body and answers. Descriptions are plain text in which
 * `code` and "- " list lines are shown as such.
 */
type Json = Record<string, any>;

/** The reference page of `document`. */
export function referencePage(document: Json): string {
  const operations = Object.entries(document.paths as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json).map(([method, operation]) => ({ path, method, operation: operation as Json })),
  );
  const tags = [...new Set(operations.map((o) => o.operation.tags[0] as string))];
  const sections = tags.map((tag) => {
    const items = operations.filter((o) => o.operation.tags[0] === tag);
    return `<section id="${anchor(tag)}"><h2>${escape(tag)}</h2>${items.map((o) => operationHtml(o.path, o.method, o.operation)).join("")}</section>`;
  });
  const toc = tags.map((tag) => `<a href="#${anchor(tag)}">${escape(tag)}</a>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(document.info.title)} API reference</title><style>${STYLE}</style></head>
<body><header><h1>${escape(document.info.title)} API <small>${escape(document.info.version)}</small></h1>
<p>${prose(document.info.description)}</p><p>The document itself: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escape(document.openapi)}).</p>
<nav>${toc}</nav></header><main>${sections.join("")}</main></body></html>`;
}

function operationHtml(path: string, method: string, operation: Json): string {
  const parameters = (operation.parameters as Json[]) ?? [];
  const rows = parameters
    .map((p) => `<tr><td><code>${escape(p.name)}</code>${p.required ? " *" : ""}</td><td>${escape(p.in)}</td><td>${escape(p.schema?.type ?? "")}</td><td>${prose(p.description ?? "")}</td></tr>`)
    .join("");
  const body = operation.requestBody as Json | undefined;
  const bodyHtml = body
    ? `<h4>Body</h4>${body.description ? `<p>${prose(body.description)}</p>` : ""}${Object.entries(body.content as Json)
        .map(([type, media]) => `<p><code>${escape(type)}</code></p><pre>${escape(JSON.stringify((media as Json).schema, null, 2))}</pre>`)
        .join("")}`
    : "";
  const answers = Object.entries(operation.responses as Json)
    .map(([status, answer]) => `<li><b>${escape(status)}</b> ${prose((answer as Json).description)}</li>`)
    .join("");
  return `<article id="${escape(operation.operationId)}"><h3><span class="method ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>
<p>${escape(operation.summary)}${operation.security?.length === 0 ? " <em>(no token)</em>" : ""}</p>${operation.description ? `<p>${prose(operation.description)}</p>` : ""}
${rows ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>meaning</th></tr>${rows}</table>` : ""}${bodyHtml}<h4>Answers</h4><ul>${answers}</ul></article>`;
}

/** Escaped text with `code` spans and "- " list lines. */
function prose(text: string): string {
  const lines = escape(text).replace(/`([^`]+)`/g, "<code>$1</code>").split("\n");
  return lines.map((line) => (line.startsWith("- ") ? `<br>• ${line.slice(2)}` : line)).join(" ");
}

function anchor(tag: string): string {
  return tag.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}

function escape(text: string): string {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330}header{padding:1.5rem 2rem;background:#f4f6fa;border-bottom:1px solid #dde2ea}
nav a{margin-right:1rem}main{padding:0 2rem 3rem;max-width:70rem}article{border-top:1px solid #e4e8ef;padding:.5rem 0}
h3{font-size:1rem;margin:.8rem 0 .2rem}h4{margin:.6rem 0 .2rem;font-size:.9rem}table{border-collapse:collapse;font-size:.9rem}
td,th{border:1px solid #e1e5ec;padding:.2rem .5rem;text-align:left;vertical-align:top}pre{background:#f6f8fa;padding:.5rem;overflow:auto;font-size:.8rem}
.method{display:inline-block;min-width:4.2rem;text-align:center;border-radius:4px;color:#fff;font-size:.8rem;padding:.1rem .3rem;background:#6b7280}
.get{background:#2563eb}.post{background:#059669}.delete{background:#dc2626}.patch,.put{background:#d97706}small{color:#6b7280;font-weight:normal}`;

/**
 * The reference page: Swagger UI (assets.ts, client.ts) on the API document.
 * A bar leads to the dashboard and the document itself; without JavaScript
 * the page says where the document is.
 */
import type { ReferencePaths } from "./assets";

/** The page showing the document at `documentPath` with the assets at `paths`. */
export function referencePage(title: string, documentPath: string, paths: ReferencePaths): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} API reference</title><link rel="icon" type="image/svg+xml" href="${paths.favicon}">
<link rel="stylesheet" href="${paths.swaggerStyle}"><link rel="stylesheet" href="${paths.style}"></head>
<body><nav class="reference-bar"><strong>${escape(title)} API</strong><a href="/dashboard">Dashboard</a><a href="${documentPath}">${documentPath}</a></nav>
<noscript><p>This page needs JavaScript. The API document is at <a href="${documentPath}">${documentPath}</a>.</p></noscript>
<div id="reference" data-document="${documentPath}"></div>
<script src="${paths.swaggerScript}"></script><script src="${paths.script}"></script>
</body></html>`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

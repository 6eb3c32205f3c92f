/**
 * `GET /openapi.json`, the API document (OpenAPI 3.1) built from the
 * operations of every route (http/openapi/), and `GET /docs`, its browsable
 * reference page (Swagger UI, served from its npm package with its assets
 * under `/docs/assets/`; http/openapi/reference/). All without a token: they
 * say what the API takes, nothing of what it holds; "try it" on the page
 * sends the token the reader pastes.
 */
import { Hono } from "hono";
import type { RouterRoute } from "hono/types";
import packageJson from "../../../package.json" with { type: "json" };
import { apiDocument } from "../openapi/document";
import { operation } from "../openapi/operation";
import { ASSETS_PATH, referenceAssetRoutes, referencePaths } from "../openapi/reference/assets";
import { referencePage } from "../openapi/reference/page";

const DESCRIPTION = [
  "Dispatch stores what is published to it and delivers it later as HTTP requests, with delays, retries, deduplication, callbacks, a dead letter queue, queues, URL groups, schedules, flow control and workflow runs.",
  "Every /v2 operation needs `Authorization: Bearer <token>`; errors are `{\"error\": \"...\"}`.",
].join(" ");

const DOCUMENT = operation({
  summary: "The API document",
  description: "This document: every route of the API, generated from the schemas that validate its requests.",
  tag: "Operations",
  access: "public",
  database: false,
  responses: { 200: "OpenAPI 3.1 document." },
});

const REFERENCE = operation({
  summary: "The API reference page",
  tag: "Operations",
  access: "public",
  database: false,
  description: "This document as a web page: grouped by resource, searchable, and each operation can be tried against this server with a token.",
  responses: { 200: { description: "The page.", contentType: "text/html" } },
});

/** The document routes over the app's routes (read when first asked, once every route is mounted). */
export function apiDocumentRoutes(routes: () => RouterRoute[]) {
  let document: Record<string, unknown> | undefined;
  let page: string | undefined;
  const documentOf = () =>
    (document ??= apiDocument(routes(), { title: "Dispatch", version: packageJson.version, description: DESCRIPTION }));
  return new Hono()
    .get("/openapi.json", DOCUMENT.describe, (c) => c.json(documentOf()))
    .get("/docs", REFERENCE.describe, (c) => c.html((page ??= referencePage("Dispatch", "/openapi.json", referencePaths()))))
    .route(ASSETS_PATH, referenceAssetRoutes());
}

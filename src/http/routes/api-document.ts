/**
 * `GET /openapi.json`, the API document (OpenAPI 3.1) built from the
 * operations of every route (http/openapi/), and `GET /docs`, its browsable
 * reference page. Both without a token: they say what the API takes, nothing
 * of what it holds.
 */
import { Hono } from "hono";
import type { RouterRoute } from "hono/types";
import packageJson from "../../../package.json" with { type: "json" };
import { apiDocument } from "../openapi/document";
import { operation } from "../openapi/operation";
import { referencePage } from "../openapi/reference";

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
  responses: { 200: { description: "This document as a web page.", contentType: "text/html" } },
});

/** The document routes over the app's routes (read when first asked, once every route is mounted). */
export function apiDocumentRoutes(routes: () => RouterRoute[]) {
  let document: Record<string, unknown> | undefined;
  let page: string | undefined;
  const documentOf = () =>
    (document ??= apiDocument(routes(), { title: "Dispatch", version: packageJson.version, description: DESCRIPTION }));
  return new Hono()
    .get("/openapi.json", DOCUMENT.describe, (c) => c.json(documentOf()))
    .get("/docs", REFERENCE.describe, (c) => c.html((page ??= referencePage(documentOf()))));
}

/**
 * The dashboard's static files, served by the process itself (no CDN): htmx
 * (read from its npm package at start), the stylesheet, a small script and
 * the icon,
 * each under a name holding its content hash, so they are cached for a year
 * and a new release is fetched at once.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Hono } from "hono";
import { FAVICON_SVG, FAVICON_TYPE } from "../../favicon";
import { CLIENT_SCRIPT } from "./client";
import { STYLESHEET } from "./style";

/** A served file: its hashed name and what it holds. */
interface Asset {
  name: string;
  type: string;
  body: string;
}

function asset(stem: string, extension: string, type: string, body: string): Asset {
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
  return { name: `${stem}-${hash}.${extension}`, type, body };
}

const htmxSource = () => readFileSync(createRequire(import.meta.url).resolve("htmx.org/dist/htmx.min.js"), "utf8");

/** The hashed paths of the assets, for the layout's links. */
export interface AssetPaths {
  htmx: string;
  style: string;
  script: string;
  favicon: string;
}

/** The assets and the routes serving them (mounted at `/dashboard/assets`). */
export function dashboardAssets(): { paths: AssetPaths; routes: Hono } {
  const files = {
    htmx: asset("htmx", "js", "text/javascript; charset=utf-8", htmxSource()),
    style: asset("style", "css", "text/css; charset=utf-8", STYLESHEET),
    script: asset("dashboard", "js", "text/javascript; charset=utf-8", CLIENT_SCRIPT),
    favicon: asset("favicon", "svg", FAVICON_TYPE, FAVICON_SVG),
  };
  const byName = new Map(Object.values(files).map((file) => [file.name, file]));
  const routes = new Hono().get("/:name", (c) => {
    const file = byName.get(c.req.param("name"));
    if (!file) return c.text("no such asset", 404);
    c.header("Cache-Control", "public, max-age=31536000, immutable");
    c.header("Content-Type", file.type);
    return c.body(file.body);
  });
  const path = (file: Asset) => `/dashboard/assets/${file.name}`;
  const paths = { htmx: path(files.htmx), style: path(files.style), script: path(files.script), favicon: path(files.favicon) };
  return { paths, routes };
}

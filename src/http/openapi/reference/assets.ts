/**
 * The files of the reference page, served by the process itself (nothing
 * from elsewhere): Swagger UI's browser bundle and stylesheet, read from the
 * swagger-ui-dist npm package, the page's own script and style
 * (client.ts), and Dispatch's icon (favicon.ts). Each is served under a name holding its content hash, cached
 * for a year, gzipped when the browser takes it. Read and compressed once,
 * when the reference is first asked for.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { gzipSync } from "node:zlib";
import { Hono } from "hono";
import { FAVICON_SVG, FAVICON_TYPE } from "../../favicon";
import { REFERENCE_SCRIPT, REFERENCE_STYLE } from "./client";

/** A served file: its hashed name, its type, and its bytes as they are and gzipped. */
interface Asset {
  name: string;
  type: string;
  body: Uint8Array<ArrayBuffer>;
  gzipped: Uint8Array<ArrayBuffer>;
}

/** Where the assets are served. */
export const ASSETS_PATH = "/docs/assets";

/** The hashed paths of the assets, for the page's links. */
export interface ReferencePaths {
  swaggerScript: string;
  swaggerStyle: string;
  script: string;
  style: string;
  favicon: string;
}

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

function asset(stem: string, extension: string, type: string, text: string): Asset {
  const body = new TextEncoder().encode(text);
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
  return { name: `${stem}-${hash}.${extension}`, type, body, gzipped: new Uint8Array(gzipSync(body)) };
}

/** A file of swagger-ui-dist, without its source map comment (the maps are not served). */
function swaggerFile(file: string): string {
  const text = readFileSync(createRequire(import.meta.url).resolve(`swagger-ui-dist/${file}`), "utf8");
  return text.replace(/\n?\/[/*]# sourceMappingURL=\S+( \*\/)?\s*$/, "\n");
}

let files: Record<keyof ReferencePaths, Asset> | undefined;
const filesOf = () =>
  (files ??= {
    swaggerScript: asset("swagger-ui-bundle", "js", JS, swaggerFile("swagger-ui-bundle.js")),
    swaggerStyle: asset("swagger-ui", "css", CSS, swaggerFile("swagger-ui.css")),
    script: asset("reference", "js", JS, REFERENCE_SCRIPT),
    style: asset("reference", "css", CSS, REFERENCE_STYLE),
    favicon: asset("favicon", "svg", FAVICON_TYPE, FAVICON_SVG),
  });

/** The paths of the assets (reading them the first time). */
export function referencePaths(): ReferencePaths {
  const all = filesOf();
  const path = (key: keyof ReferencePaths) => `${ASSETS_PATH}/${all[key].name}`;
  return {
    swaggerScript: path("swaggerScript"),
    swaggerStyle: path("swaggerStyle"),
    script: path("script"),
    style: path("style"),
    favicon: path("favicon"),
  };
}

/** The routes serving the assets (mounted at ASSETS_PATH). */
export function referenceAssetRoutes(): Hono {
  return new Hono().get("/:name", (c) => {
    const file = Object.values(filesOf()).find((candidate) => candidate.name === c.req.param("name"));
    if (!file) return c.text("no such asset", 404);
    const gzip = /\bgzip\b/.test(c.req.header("Accept-Encoding") ?? "");
    c.header("Cache-Control", "public, max-age=31536000, immutable");
    c.header("Content-Type", file.type);
    c.header("Vary", "Accept-Encoding");
    if (gzip) c.header("Content-Encoding", "gzip");
    return c.body(gzip ? file.gzipped : file.body);
  });
}

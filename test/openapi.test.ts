/**
 * The API document: `/openapi.json` is valid OpenAPI 3.1, describes every
 * route the router has (a route without an operation fails here), and says
 * what the routes accept: the query parameters it lists are exactly those a
 * route takes, and a body its schema refuses is refused; its groups (tags)
 * come publishing first, each with a line. `/docs` shows it with Swagger UI,
 * whose files the service serves itself, hashed, gzipped and cached.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { beforeAll, describe, expect, it } from "vitest";
import { openApiPath, TAGS } from "../src/http/openapi/document";
import { appRoutes } from "./support/routes";
import { TEST_TOKEN, useDispatch } from "./support/service";

/** Middleware the app mounts for any method: not routes of the API. */
const MIDDLEWARE = ["ALL /*", "ALL /v2/*", "ALL /v2/workflows/hooks/*", "ALL /metrics", "ALL /admin/*"];
/** The dashboard's pages (and `/`, which leads there) and the reference page's files are for people, not part of the API. */
const isPage = (path: string) => path === "/" || path === "/dashboard" || path.startsWith("/dashboard/") || path.startsWith("/docs/assets/");

type Operation = { tags: string[]; parameters: { name: string; in: string; description: string }[]; responses: Record<string, unknown>; requestBody?: unknown };
type Document = {
  openapi: string;
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
};

const dispatch = useDispatch();
let document: Document;

beforeAll(async () => {
  const response = await fetch(`${dispatch.baseUrl}/openapi.json`);
  expect(response.status).toBe(200);
  document = (await response.json()) as Document;
});

/** Each operation of the document as [method, path, operation]. */
const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [method, path, op] as const));

describe("the API document", () => {
  it("is valid OpenAPI 3.1", async () => {
    expect(document.openapi).toBe("3.1.0");
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("describes every route of the router, with each of its methods", () => {
    const routes = appRoutes().filter((route) => !MIDDLEWARE.includes(`${route.method} ${route.path}`) && !isPage(route.path));
    const missing = routes.filter((route) => {
      const methods = route.method === "ALL" ? ["get", "post"] : [route.method.toLowerCase()];
      return methods.some((method) => document.paths[openApiPath(route.path)]?.[method] === undefined);
    });
    expect(missing.map((route) => `${route.method} ${route.path}`)).toEqual([]);
    expect(operations().length).toBeGreaterThan(60);
  });

  it("gives every operation its path parameters, a meaning for each, and its error answers", () => {
    for (const [method, path, op] of operations()) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      expect(op.parameters.filter((p) => p.in === "path").map((p) => p.name), `${method} ${path}`).toEqual(inPath);
      for (const parameter of op.parameters) expect(parameter.description, `${method} ${path} ${parameter.name}`).not.toBe(parameter.name);
      expect(Object.keys(op.responses), `${method} ${path}`).toContain("400");
      if (path.startsWith("/v2/") && !path.startsWith("/v2/workflows/hooks")) expect(Object.keys(op.responses)).toContain("401");
    }
  });

  it("lists exactly the query parameters a list route accepts", async () => {
    const lists = operations().filter(([method, path, op]) => method === "get" && !path.includes("{") && op.parameters.some((p) => p.in === "query"));
    expect(lists.length).toBeGreaterThanOrEqual(6);
    for (const [, path, op] of lists) {
      const response = await dispatch.api(`${path}?notAParameter=1`);
      const { error } = await response.json();
      expect(response.status, path).toBe(400);
      const accepted = error.match(/accepted: (.*)$/)[1].split(", ");
      expect(accepted.sort(), path).toEqual(op.parameters.filter((p) => p.in === "query").map((p) => p.name).sort());
    }
  });

  it("states the body schema its routes check", async () => {
    const upsert = document.paths["/v2/queues"]!.post!.requestBody as { content: { "application/json": { schema: Record<string, any> } } };
    const schema = upsert.content["application/json"].schema;
    expect(schema.required).toEqual(["queueName"]);
    // 0 is "not given" (the Go client always sends the field): 1.
    expect(schema.properties.parallelism.minimum).toBe(0);
    const refused = await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "q", parallelism: -1 }) });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatch(/parallelism must be at least 1/);
    const missing = await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ parallelism: 2 }) });
    expect((await missing.json()).error).toMatch(/invalid queue: queueName/);
  });

  it("groups the operations by resource, publishing first and operations last, each group with a line", () => {
    expect(document.tags.map((tag) => tag.name)).toEqual(Object.keys(TAGS));
    expect(document.tags[0]!.name).toBe("Publish");
    expect(document.tags.at(-1)!.name).toBe("Operations");
    for (const tag of document.tags) expect(tag.description, tag.name).toMatch(/^[A-Z].{20,}\.$/);
    const order = operations().map(([, , op]) => document.tags.findIndex((tag) => tag.name === op.tags[0]));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order).not.toContain(-1);
  });

  it("is tried against this server with a bearer token", () => {
    expect(document.servers).toEqual([{ url: "/", description: "This Dispatch server." }]);
    expect(document.components.securitySchemes.token).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("lists every publish option header on publish", () => {
    const headers = document.paths["/v2/publish/{destination}"]!.post!.parameters.filter((p) => p.in === "header").map((p) => p.name);
    expect(headers).toEqual(expect.arrayContaining(["Svc-Retries", "Svc-Delay", "Svc-Callback", "Svc-Flow-Control-Key", "Svc-Redact-Fields"]));
  });
});

describe("the reference page", () => {
  it("is Swagger UI on the document, every file from this server, with no token in it", async () => {
    const response = await fetch(`${dispatch.baseUrl}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/html/);
    const html = await response.text();
    expect(html).toContain('data-document="/openapi.json"');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toContain(TEST_TOKEN);
    const assets = [...html.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.map((path) => path.replace(/-[0-9a-f]{12}\./, "."))).toEqual([
      "/docs/assets/favicon.svg",
      "/docs/assets/swagger-ui.css",
      "/docs/assets/reference.css",
      "/docs/assets/swagger-ui-bundle.js",
      "/docs/assets/reference.js",
    ]);
  });

  it("serves its files with their type, gzipped when asked, cached for a year under their hash", async () => {
    const html = await (await fetch(`${dispatch.baseUrl}/docs`)).text();
    const bundle = html.match(/src="(\/docs\/assets\/swagger-ui-bundle-[0-9a-f]{12}\.js)"/)![1]!;
    const style = html.match(/href="(\/docs\/assets\/swagger-ui-[0-9a-f]{12}\.css)"/)![1]!;
    // fetch asks for gzip and decodes it.
    const script = await fetch(`${dispatch.baseUrl}${bundle}`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(script.headers.get("content-encoding")).toBe("gzip");
    expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(script.headers.get("vary")).toBe("Accept-Encoding");
    const text = await script.text();
    expect(text).toContain("SwaggerUIBundle");
    expect(text).not.toContain("sourceMappingURL");

    const plain = await fetch(`${dispatch.baseUrl}${style}`, { headers: { "Accept-Encoding": "identity" } });
    expect(plain.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await plain.text()).toContain(".swagger-ui");

    expect((await fetch(`${dispatch.baseUrl}/docs/assets/swagger-ui-bundle-000000000000.js`)).status).toBe(404);
  });
});

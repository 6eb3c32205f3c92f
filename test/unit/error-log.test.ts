/** A 500's log line names the route's pattern, never the request path (which can hold a destination URL and its secrets). */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { DatabaseAvailability } from "../../src/db/availability";
import { renderError } from "../../src/http/server/errors";

describe("the internal error's log line", () => {
  it("names the method and the route's pattern, not the path", async () => {
    const lines: string[] = [];
    const deps = { availability: { failed: () => false } as unknown as DatabaseAvailability, log: (line: string) => void lines.push(line) };
    const app = new Hono()
      .use(async (_c, next) => next())
      .post("/v2/publish/*", () => {
        throw new Error("boom");
      })
      .onError((error, c) => renderError(error, c, deps));

    const response = await app.request("/v2/publish/https://user:s3cr3t-password@example.com/hook?token=s3cr3t-query", { method: "POST" });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: "internal error", requestId: "-" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^internal error \[request -\] on POST \/v2\/publish\/\*: Error: boom/);
    expect(lines[0]).not.toContain("s3cr3t");
  });
});

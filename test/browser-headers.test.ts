/**
 * What browsers are told: every dashboard page and the API reference carry a
 * strict Content-Security-Policy (scripts only from Dispatch itself), no
 * framing, no referrer and nosniff; dashboard pages are not cached; HSTS only
 * for a request that came over https; the JSON API is nosniff.
 */
import { describe, expect, it } from "vitest";
import { dashboardSession } from "./support/dashboard-session";
import { request, useDispatch } from "./support/service";

const dispatch = useDispatch();

function expectPageHeaders(headers: Headers, path: string): void {
  const csp = headers.get("content-security-policy") ?? "";
  expect(csp, path).toContain("script-src 'self'");
  expect(csp, path).toContain("frame-ancestors 'none'");
  expect(csp, path).toContain("default-src 'self'");
  expect(csp, path).not.toMatch(/script-src[^;]*unsafe/);
  expect(headers.get("x-content-type-options"), path).toBe("nosniff");
  expect(headers.get("referrer-policy"), path).toBe("no-referrer");
  expect(headers.get("x-frame-options"), path).toBe("DENY");
  expect(headers.get("strict-transport-security"), path).toBeNull();
}

describe("browser headers", () => {
  it("on every dashboard page, not cached, and on the API reference", async () => {
    const { cookie } = await dashboardSession(dispatch.baseUrl);
    const pages = ["/dashboard", "/dashboard/messages", "/dashboard/dlq", "/dashboard/destinations", "/dashboard/queues",
      "/dashboard/schedules", "/dashboard/flow-control", "/dashboard/workflows", "/dashboard/keys", "/dashboard/publish", "/dashboard/url-groups", "/dashboard/login"];
    for (const path of pages) {
      const response = await request(`${dispatch.baseUrl}${path}`, { headers: { Cookie: cookie }, redirect: "manual" });
      expect(response.status, path).toBeLessThan(400);
      expectPageHeaders(response.headers, path);
      expect(response.headers.get("cache-control"), path).toBe("no-store");
    }
    const docs = await request(`${dispatch.baseUrl}/docs`);
    expectPageHeaders(docs.headers, "/docs");
  });

  it("HSTS only when the request came over https; the JSON API is nosniff", async () => {
    const overHttps = await request(`${dispatch.baseUrl}/docs`, { headers: { "X-Forwarded-Proto": "https" } });
    expect(overHttps.headers.get("strict-transport-security")).toMatch(/^max-age=31536000/);
    const api = await dispatch.api("/v2/queues");
    expect(api.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

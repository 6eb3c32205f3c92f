/** Signing in to the dashboard over plain HTTP, as the tests that fetch its pages without a browser do. */
import { expect } from "vitest";
import { TEST_TOKEN } from "./service";

/** Signs in at `baseUrl` with `token`: the session's cookie header and its CSRF token. */
export async function dashboardSession(baseUrl: string, token = TEST_TOKEN): Promise<{ cookie: string; csrf: string }> {
  const response = await fetch(`${baseUrl}/dashboard/login`, {
    method: "POST",
    body: new URLSearchParams({ token }),
    redirect: "manual",
  });
  expect(response.status).toBe(303);
  const cookie = response.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await fetch(`${baseUrl}/dashboard`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  return { cookie, csrf };
}

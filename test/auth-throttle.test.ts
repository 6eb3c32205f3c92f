/**
 * Failed authentication is throttled per address: past the limit in a minute
 * (DISPATCH_AUTH_FAILURE_LIMIT), the API and the dashboard's sign-in answer
 * 429 with Retry-After, a good token included, until the minute is over.
 * Unknown tokens are looked up in the database once per few seconds, not at
 * every request.
 */
import { describe, expect, it, vi } from "vitest";
import { tokenDigest } from "../src/domain/access-tokens/access-tokens";
import { fixedTokenSet, LiveTokenSet } from "../src/domain/access-tokens/token-set";
import { request, TEST_TOKEN, useDispatch } from "./support/service";

const LIMIT = 5;
const dispatch = useDispatch({ authFailureLimit: LIMIT });
const limited = useDispatch({ authFailureLimit: LIMIT });

const withToken = (service: typeof dispatch, token: string) =>
  request(`${service.baseUrl}/v2/queues`, { headers: { Authorization: `Bearer ${token}` } });

describe("failed authentication", () => {
  it("answers 429 with Retry-After past the limit, to a good token too; other services keep their own count", async () => {
    expect((await withToken(dispatch, TEST_TOKEN)).status).toBe(200);
    for (let i = 0; i < LIMIT; i++) expect((await withToken(dispatch, `wrong-token-${i}-0123456789`)).status).toBe(401);
    for (const token of ["wrong-token-x-0123456789", TEST_TOKEN]) {
      const refused = await withToken(dispatch, token);
      expect(refused.status).toBe(429);
      const seconds = Number(refused.headers.get("retry-after"));
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(60);
      expect((await refused.json()).error).toMatch(/too many failed attempts to authenticate from this address; retry in \d+ s/);
    }
    // A missing token counts too, and the metrics route is behind the same throttle.
    expect((await request(`${dispatch.baseUrl}/metrics`)).status).toBe(429);
    expect((await withToken(limited, TEST_TOKEN)).status).toBe(200);
  });

  it("counts refused dashboard sign-ins, and refuses sign-in past the limit", async () => {
    const signIn = (token: string) =>
      fetch(`${limited.baseUrl}/dashboard/login`, { method: "POST", body: new URLSearchParams({ token }), redirect: "manual" });
    for (let i = 0; i < LIMIT; i++) expect((await signIn(`wrong-token-${i}-0123456789`)).status).toBe(401);
    const refused = await signIn(TEST_TOKEN);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("set-cookie")).toBeNull();
  });
});

describe("unknown tokens", () => {
  it("are looked up in the database once per few seconds, not at every request", async () => {
    let queries = 0;
    // findAccessToken's one statement, counted: no stored token has the digest.
    const sql = (() => {
      queries++;
      return Promise.resolve([]);
    }) as never;
    const tokens = new LiveTokenSet(sql, null as never, fixedTokenSet([TEST_TOKEN], []), () => {});
    const unknown = tokenDigest("unknown-token-0123456789");
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      for (let i = 0; i < 20; i++) expect(await tokens.lookup(unknown)).toBeNull();
      expect(queries).toBe(1);
      expect(await tokens.lookup(tokenDigest("another-unknown-0123456789"))).toBeNull();
      expect(queries).toBe(2);
      vi.setSystemTime(Date.now() + 6_000);
      expect(await tokens.lookup(unknown)).toBeNull();
      expect(queries).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });
});

/**
 * Headers a message would be sent with are checked against RFC 9110 at
 * publish: a name that is not a token, or a value with CR, LF, NUL or
 * another control character, is a 400 naming the header, and nothing is
 * stored (it could never be sent, or would split the request). JSON bodies
 * (a batch) are where such bytes can arrive; HTTP itself refuses them.
 */
import { describe, expect, it } from "vitest";
import { storedRowCount } from "./support/rows";
import { useDispatch } from "./support/service";

const dispatch = useDispatch();

const batch = (headers: Record<string, string>) =>
  dispatch.api("/v2/batch", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify([{ destination: "https://example.com/hook", headers, body: "x" }]),
  });

describe("forwarded headers at publish", () => {
  it.each([
    ["CR/LF in a value", { "Upstash-Forward-X-Note": "a\r\nInjected: yes" }, /forwarded header X-Note has a value that is not valid in HTTP/],
    ["a lone LF", { "Upstash-Forward-X-Note": "a\nb" }, /forwarded header X-Note has a value/],
    ["a NUL", { "Svc-Forward-X-Note": "a\u0000b" }, /Svc-Forward-X-Note must not contain a NUL/],
    ["a character outside Latin-1", { "Upstash-Forward-X-Note": "snow ☃" }, /forwarded header X-Note has a value/],
    ["a space in a name", { "Upstash-Forward-Bad Name": "v" }, /forwarded header name "Bad name" is not a valid HTTP header name/],
    ["CR/LF in the content type", { "Content-Type": "text/plain\r\nX-Injected: 1" }, /the header Content-Type has a value that is not valid/],
  ])("%s is a 400 naming the header, storing nothing", async (_name, headers, error) => {
    const before = await storedRowCount(dispatch);
    const response = await batch(headers);
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatch(error);
    expect(await storedRowCount(dispatch)).toBe(before);
  });

  it("takes tabs, obs-text and every visible character", async () => {
    const response = await batch({ "Upstash-Forward-X-Note": "a\tb ~!\u00e9\u00ff", "Upstash-Forward-X-Token_1": "v" });
    expect(response.status).toBe(200);
  });
});

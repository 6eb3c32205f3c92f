import { expect, it } from "vitest";
import { withoutHopHeaders } from "../../src/domain/headers/hop-headers";

it("drops the reserved names in any case and keeps the rest in order", () => {
  const headers = {
    "X-First": "1",
    "content-LENGTH": "12",
    "Transfer-Encoding": "chunked",
    TE: "trailers",
    "Keep-Alive": "timeout=5",
    "Proxy-Connection": "keep-alive",
    upgrade: "h2c",
    Expect: "100-continue",
    Trailer: "X-Sum",
    Host: "elsewhere.example",
    Authorization: "Bearer kept",
    "X-Last": "2",
  };
  expect(withoutHopHeaders(headers)).toEqual({ "X-First": "1", Authorization: "Bearer kept", "X-Last": "2" });
});

it("drops every header a Connection value names, whatever its case and spacing", () => {
  const headers = { CONNECTION: " close ,x-secret,  X-Other", "X-Secret": "s", "x-other": "o", "X-Kept": "k" };
  expect(withoutHopHeaders(headers)).toEqual({ "X-Kept": "k" });
});

it("returns a new object and leaves its argument unchanged", () => {
  const headers = { "Content-Length": "3", "X-Kept": "k" };
  expect(withoutHopHeaders(headers)).toEqual({ "X-Kept": "k" });
  expect(headers).toEqual({ "Content-Length": "3", "X-Kept": "k" });
});

/**
 * `/echo`, the embedded database's own destination: it takes no token, so it
 * counts a body as it streams in and keeps none of it; past the maximum
 * message size it answers 413 without reading the rest.
 */
import { describe, expect, it } from "vitest";
import type { DatabaseAvailability } from "../src/db/availability";
import { echoRoutes } from "../src/http/routes/echo";
import { renderError } from "../src/http/server/errors";

const MAX = 1_048_576;
const log = () => {};
/** The route needs no database: no error of it is an outage. */
const availability = { failed: () => false } as unknown as DatabaseAvailability;
// The route as the app mounts it, with the app's error rendering.
const app = echoRoutes({ log, config: { maxMessageBytes: MAX } }).onError((error, c) => renderError(error, c, { availability, log }));

/** A body of `total` bytes made 64 KiB at a time as it is read; `pulled` counts what the route read of it. */
function streamOf(total: number) {
  const chunk = new Uint8Array(65_536);
  const counter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= total) return controller.close();
      counter.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, counter };
}

describe("/echo", () => {
  it("counts a body up to the maximum message size", async () => {
    const { stream } = streamOf(MAX);
    const response = await app.request("/", { method: "POST", body: stream, duplex: "half" } as RequestInit);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: MAX, messageId: null });
  });

  it("refuses a 256 MiB body with a 413 after reading no more than the limit and one chunk of it", async () => {
    const { stream, counter } = streamOf(256 * MAX);
    const response = await app.request("/", { method: "POST", body: stream, duplex: "half" } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: string }).error).toMatch(/exceeds the maximum message size of 1048576 bytes/);
    expect(counter.pulled).toBeLessThanOrEqual(MAX + 2 * 65_536);
  });
});

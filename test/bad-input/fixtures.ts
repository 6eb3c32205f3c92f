/**
 * What the bad-input tests share: the headers of an invoke envelope and a
 * request sent as raw bytes, which node's client would refuse to send.
 */
import { connect } from "node:net";
import type { TestService } from "../support/service";

/** The init message of a run started by `context.invoke` (docs/workflow-protocol.md §8). */
export const INVOKE_HEADERS = {
  "Upstash-Workflow-RunId": "wfr_invoked",
  "Upstash-Workflow-Init": "true",
  "Upstash-Workflow-Invoke": "true",
};

/** `rawRequest(request)` against `dispatch` (the file's service). */
export function rawRequestTo(dispatch: TestService) {
  /** Sends `request` as raw bytes (node's client would refuse some of them) and reads the answer. */
  function rawRequest(request: Buffer): Promise<{ status: number; body: string }> {
    const { hostname, port } = new URL(dispatch.baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(request));
      const chunks: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("close", () => {
        const text = Buffer.concat(chunks).toString("latin1");
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
        resolve({ status, body: text.slice(text.indexOf("\r\n\r\n") + 4) });
      });
    });
  }
  return rawRequest;
}

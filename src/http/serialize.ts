/** Shapes shared by the API's JSON responses (docs/hosted-api.md §1.5); header maps are domain/headers/names.ts. */
import { parseFlowControl } from "../domain/flow-control/limits";

/** `body` when the bytes are valid UTF-8, else `bodyBase64`. */
export function bodyFields(body: Buffer): { body: string } | { bodyBase64: string } {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(body);
  return Buffer.from(text, "utf8").equals(body) ? { body: text } : { bodyBase64: body.toString("base64") };
}

/**
 * `flowControlKey`, `parallelism`, `rate` and `period` (seconds) of a message
 * or schedule, as the hosted service shows them: `period` whenever there is a
 * key (1 by default), `parallelism` and `rate` only when set; nothing without a key.
 */
export function flowControlFields(key: string | null, value: string | null) {
  if (key === null) return {};
  const { limits } = parseFlowControl(key, value ?? "", "")!;
  return {
    flowControlKey: key,
    ...(limits.parallelism !== null && { parallelism: limits.parallelism }),
    ...(limits.rate !== null && { rate: limits.rate }),
    period: limits.periodMs / 1000,
  };
}

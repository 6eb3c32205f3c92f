/** Shapes shared by the API's JSON responses (compat-api.md §1.5). */
import { canonicalHeaderName } from "../domain/dialect";

/** Headers as the API shows them: each name maps to an array of strings. */
export function headerArrays(headers: Record<string, string>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));
}

/** `body` when the bytes are valid UTF-8, else `bodyBase64`. */
export function bodyFields(body: Buffer): { body: string } | { bodyBase64: string } {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(body);
  return Buffer.from(text, "utf8").equals(body) ? { body: text } : { bodyBase64: body.toString("base64") };
}

/** Response headers (lower-case names, as received) with canonical names, as the API shows them. */
export function responseHeaderArrays(headers: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(headers).map(([name, values]) => [canonicalHeaderName(name), values]));
}

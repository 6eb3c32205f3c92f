/**
 * Looking for secrets in what the API shows, however it is encoded: every
 * string, and what it decodes to when it is base64 — read again when that is
 * JSON (a logged callback body holds the source's body in base64 inside
 * base64) — so a secret cannot pass as an encoding.
 */
import { expect } from "vitest";

/** A redacted value as the API shows it. */
export const REDACTED = /^REDACTED:[0-9a-f]{64}$/;

/** Every string in `value` (keys too), with its base64 decodings. */
export function everyText(value: unknown): string[] {
  if (typeof value === "string") {
    const texts = [value];
    if (value.length >= 4 && value.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(value)) {
      const decoded = Buffer.from(value, "base64").toString("utf8");
      texts.push(decoded);
      try {
        texts.push(...everyText(JSON.parse(decoded)));
      } catch {
        // not JSON: the decoded text is enough
      }
    }
    return texts;
  }
  if (Array.isArray(value)) return value.flatMap(everyText);
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => [k, ...everyText(v)]);
  return [];
}

/** Asserts that no text of `value` contains any of `secrets`. */
export function expectHidden(value: unknown, ...secrets: string[]): void {
  const texts = everyText(value);
  for (const secret of secrets) expect(texts.filter((text) => text.includes(secret)), secret).toEqual([]);
}

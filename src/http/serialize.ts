/** Shapes shared by the API's JSON responses (docs/hosted-api.md §1.5); header maps are domain/headers/names.ts. */
/** `body` when the bytes are valid UTF-8, else `bodyBase64`. */
export function bodyFields(body: Buffer): { body: string } | { bodyBase64: string } {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(body);
  return Buffer.from(text, "utf8").equals(body) ? { body: text } : { bodyBase64: body.toString("base64") };
}

/**
 * Header names as Dispatch shows them: Go-style canonical (`content-type` →
 * `Content-Type`), the form the hosted service gives every JSON header map
 * (docs/hosted-api.md §1.5), so that SDK users read `header["Content-Type"][0]`.
 * Every header map Dispatch writes into a body or an API response — call
 * results, callback and failure-callback bodies, webhook events, logs,
 * messages, DLQ entries, workflow logs — is shaped here. Names are stored
 * as they came; lookups stay case-insensitive.
 */

/** `content-type` → `Content-Type`. */
export function canonicalHeaderName(name: string): string {
  return name
    .toLowerCase()
    .split("-")
    .map((part) => (part ? part[0]!.toUpperCase() + part.slice(1) : part))
    .join("-");
}

/**
 * `headers` with canonical names and every value a list, as the API shows
 * headers. Names that differ only in case are one header: their values are
 * kept together, in order.
 */
export function canonicalHeaders(headers: Record<string, string | string[]>): Record<string, string[]> {
  const shown: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const values = Array.isArray(value) ? value : [value];
    const canonical = canonicalHeaderName(name);
    shown[canonical] = shown[canonical] ? [...shown[canonical], ...values] : values;
  }
  return shown;
}

/** `headers` with canonical names, one string per name (`sourceHeader` of a callback, docs/interface.md "Events"). */
export function canonicalHeaderStrings(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(canonicalHeaders(headers)).map(([name, values]) => [name, values.join(", ")]));
}

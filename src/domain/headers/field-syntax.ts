/**
 * RFC 9110 §5 syntax of the headers a message is sent with: a name is a
 * token, a value is visible characters, spaces, tabs and obs-text (bytes
 * 0x80-0xFF), never CR, LF or NUL. A header that breaks it could not be sent
 * (every attempt would fail) or would split the request, so publishing
 * refuses it with a 400 naming it.
 */
import { badRequest } from "../errors";

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Throws a 400 naming the first header of `headers` whose name or value breaks RFC 9110. */
export function checkHeaderFields(headers: Record<string, string>, what: string): void {
  for (const name in headers) {
    if (!TOKEN.test(name)) throw badRequest(`${what} header name ${JSON.stringify(name)} is not a valid HTTP header name (RFC 9110 §5.1)`);
    if (!FIELD_VALUE.test(headers[name]!)) {
      throw badRequest(
        `${what} header ${name} has a value that is not valid in HTTP (RFC 9110 §5.5): ` +
          "it holds a line break, a NUL or another control character, or a character outside Latin-1",
      );
    }
  }
}

/** URLs Dispatch sends to: callbacks, failure callbacks, URL-group endpoints. */
import { badRequest } from "./errors";

/** `text` when it is an absolute http(s) URL, else a 400 naming `what`. */
export function parseHttpUrl(text: string, what: string): string {
  if (!/^https?:\/\//i.test(text)) throw badRequest(`${what} must be a URL starting with http:// or https://`);
  try {
    new URL(text);
    return text;
  } catch {
    throw badRequest(`${what} is not a valid URL: "${text}"`);
  }
}

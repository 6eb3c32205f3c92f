/**
 * The one error type domain code throws for a request it refuses. The HTTP
 * layer renders it as `{"error": message}` with its status; anything else is
 * an opaque 500.
 */
export class AppError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 412 | 413 | 429,
    message: string,
    /** Response headers that say more (a 429's rate-limit headers). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Shorthand for a 400 with a clear message. */
export const badRequest = (message: string) => new AppError(400, message);

/**
 * A value over a limit: 412, as the hosted service answers limit and quota
 * violations (docs/hosted-api.md §1), which the workflow SDK turns into a failed
 * run instead of retrying a request that can never succeed. The message
 * names the configuration variable that raises the limit, or says it is fixed.
 */
export const overLimit = (message: string, setting: string | null) =>
  new AppError(412, `${message} (${setting === null ? "a fixed limit" : `raise it with ${setting}`})`);

/** Why `what` (a body, a response) is refused or cut off: over the maximum message size. */
export const tooLargeText = (what: string, maxBytes: number) =>
  `${what} exceeds the maximum message size of ${maxBytes} bytes (raise it with DISPATCH_MAX_MESSAGE_SIZE)`;

/** A 413 for a body over the maximum message size. */
export const tooLarge = (what: string, maxBytes: number) => new AppError(413, tooLargeText(what, maxBytes));

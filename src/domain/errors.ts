/**
 * The one error type domain code throws for a request it refuses. The HTTP
 * layer renders it as `{"error": message}` with its status; anything else is
 * an opaque 500.
 */
export class AppError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 412 | 413 | 429,
    message: string,
  ) {
    super(message);
  }
}

/** Shorthand for a 400 with a clear message. */
export const badRequest = (message: string) => new AppError(400, message);

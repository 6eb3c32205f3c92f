/**
 * Why the API could not listen, in words that say what to set. Apart from
 * service.ts so that the CLI can tell this failure without loading the service.
 */

/**
 * The API could not listen where it was told (the address is taken, most
 * often by another Dispatch): everything the start had begun is stopped,
 * and the message says what to set.
 */
export class ListenError extends Error {
  override readonly name = "ListenError";
}

/** What a failed listen says: which address, and what to set. */
export function listenError(error: NodeJS.ErrnoException, host: string, port: number): ListenError {
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (error.code === "EADDRINUSE") {
    return new ListenError(`cannot listen on ${address}: the address is in use (another Dispatch, or another program); set PORT to a free port, or stop the one using it`);
  }
  if (error.code === "EACCES") return new ListenError(`cannot listen on ${address}: not allowed (ports below 1024 need privileges); set PORT to 1024 or above`);
  if (error.code === "EADDRNOTAVAIL") return new ListenError(`cannot listen on ${address}: no interface of this machine has that address; set HOST to one it has (127.0.0.1, 0.0.0.0)`);
  return new ListenError(`cannot listen on ${address}: ${error.message}`);
}

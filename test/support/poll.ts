/**
 * The one way a test waits for something: `probe` is called every
 * `intervalMs` until it returns a value other than undefined, null or false,
 * which `poll` returns; after `timeoutMs` it fails saying what it waited for.
 */
import { sleep } from "./receiver";

type Maybe<T> = T | undefined | null | false;

export async function poll<T>(
  probe: () => Promise<Maybe<T>> | Maybe<T>,
  waitingFor: string | (() => string | Promise<string>),
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) {
      const what = typeof waitingFor === "string" ? waitingFor : await waitingFor();
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    }
    await sleep(intervalMs);
  }
}

/**
 * prom-client's process and runtime metrics (`dispatch_process_*`,
 * `dispatch_nodejs_*`): facts of the process, not of a service, so one
 * registry per process, made at the first scrape's need and shared by every
 * service it runs (the tests run many, one after another).
 *
 * Its event-loop delay histogram samples on a timer of its own that nothing
 * stops: made per service, each stopped service left one running. It samples
 * every 100 ms, not prom-client's 10 ms: an idle process woke 100 times a
 * second for it, about 9 ms of CPU a second on this project's machines, while
 * a stall of the loop long enough to matter still shows in the percentiles.
 */
import { collectDefaultMetrics, Registry } from "prom-client";

/** How often the event loop's delay is sampled, ms. */
const EVENT_LOOP_SAMPLE_MS = 100;

let registry: Registry | undefined;

/** This process's runtime metrics (made once). */
export function runtimeMetrics(): Registry {
  if (registry === undefined) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: "dispatch_", eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
  return registry;
}

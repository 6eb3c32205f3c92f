/**
 * Prometheus metrics (prom-client, the standard Node client): counters and
 * histograms the API and the worker feed as things happen, and gauges read
 * from the database when `/metrics` is scraped (what waits, what is in
 * flight, the DLQ, queue lag, workflow runs by state, database connections,
 * this process's worker heartbeat, how overdue due messages and retention
 * are, whether the database answered: database-state.ts, distributed-state.ts on Citus). Each service has its own registry, so
 * several in one process (tests) do not collide; the process's own runtime metrics are shared
 * (runtime-metrics.ts). What belongs to a project
 * (publishes, outcomes, what waits, the DLQ, queue lag) carries a `project`
 * label, its values bounded by project-label.ts.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Sql } from "../db/client";
import { DEFAULT_PROJECT } from "../db/vocabulary";
import { type DatabaseState, readDatabaseState, scrapeReads } from "./database-state";
import { readDistributedState } from "./distributed-state";
import { ProjectLabels } from "./project-label";
import { runtimeMetrics } from "./runtime-metrics";

/** What the gauges read from the database need besides the pool. */
export interface DatabaseSources {
  /** This process's worker's heartbeat row (null without a worker). */
  heartbeatId: () => string | null;
  /** DISPATCH_RETENTION, ms: finished messages older than this are due for removal. */
  retentionMs: number;
  /** Whether the tables are distributed over a Citus cluster (the reads are then distributed-state.ts's). */
  distributed: boolean;
  /** Hears why a scrape's read failed or was late (the scrape then answers without the database's figures). */
  readFailed: (error: unknown) => void;
}

export class Metrics {
  private readonly registry = new Registry();
  /** The `project` label's value of a project (project-label.ts). */
  readonly projects = new ProjectLabels();
  /** Messages accepted by publish, enqueue and batch, by project, dialect and destination kind (url, group, api). */
  readonly published = this.counter(
    "dispatch_messages_published_total",
    "Messages accepted by publish, enqueue and batch",
    ["project", "dialect", "destination"],
  );
  /** Publishes answered with an existing message's id. */
  readonly deduplicated = this.counter(
    "dispatch_messages_deduplicated_total",
    "Publishes answered with the id of an existing message",
    ["project", "dialect", "destination"],
  );
  /** Recorded attempts by project and what they led to: delivered, retried or failed. */
  readonly outcomes = this.counter("dispatch_delivery_outcomes_total", "Delivery attempts by outcome (delivered, retried, failed)", ["project", "outcome"]);
  readonly attemptSeconds = new Histogram({
    name: "dispatch_delivery_attempt_duration_seconds",
    help: "Duration of delivery attempts, request sent to response read",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: "dispatch_http_request_duration_seconds",
    help: "Duration of API requests by method, route and status (publish is route /v2/publish/*)",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly schedulesFired = this.counter("dispatch_schedule_ticks_fired_total", "Schedule ticks fired by this process", []);
  /** Outcome batches that failed as a whole and were written one record at a time instead, by kind (plain, other). */
  readonly outcomeBatchFallbacks = this.counter(
    "dispatch_outcome_batch_fallbacks_total",
    "Outcome batches that failed as a whole and were written one record at a time",
    ["batch"],
  );

  /** Messages stored already claimed by this process's worker as they were published (domain/publish/local-delivery.ts). */
  readonly claimedAtPublish = this.counter(
    "dispatch_messages_claimed_at_publish_total",
    "Messages stored already claimed by this process's worker as they were published, skipping the work list",
    [],
  );

  /** Circuits that changed state, by the state they went to (counted by the process that changed them). */
  readonly circuitChanges = this.counter(
    "dispatch_destination_circuit_changes_total",
    "Destination circuits that changed state, by the state they went to (OPEN, PROBING, CLOSED, GAVE_UP)",
    ["to"],
  );

  /** This process's worker's requests in flight, by their destination's circuit state (set by the worker role). */
  private slotsByCircuit: () => Iterable<[string, number]> = () => [];

  /** Where `dispatch_destination_slots` reads this process's requests in flight by circuit state. */
  countSlotsWith(source: () => Iterable<[string, number]>): void {
    this.slotsByCircuit = source;
  }

  constructor(sql: Sql, sources: DatabaseSources) {
    // One query per scrape, shared by every gauge below; a failed or late one (the database away) reads as null.
    const read = sources.distributed ? readDistributedState : readDatabaseState;
    const readOnce = scrapeReads(() => read(sql, sources.heartbeatId(), sources.retentionMs), sources.readFailed);
    this.gauge("dispatch_database_up", "1 when this scrape read the database, 0 when it could not or had no answer within 5 s (the other database gauges are then absent)", [], async (g) =>
      g.set((await readOnce()) === null ? 0 : 1));
    const fromDatabase = (name: string, help: string, labels: string[], set: (g: Gauge, state: DatabaseState) => void) =>
      this.gauge(name, help, labels, async (g) => {
        const read = await readOnce();
        g.reset();
        if (read !== null) set(g, read);
        // Without the read, no figure: a reset gauge without labels would still say 0.
        else if (labels.length === 0) g.remove();
      });
    fromDatabase("dispatch_messages_waiting", "Messages due (or held back by flow control or their destination) and not yet claimed", ["project"], (g, s) =>
      this.byProject(g, s.waiting));
    fromDatabase("dispatch_messages_overdue_seconds", "How long the project's longest-due message not yet claimed has been due (0: none waits)", ["project"], (g, s) =>
      this.byProject(g, s.overdue, "max"));
    fromDatabase("dispatch_messages_in_flight", "Messages claimed by workers and not yet recorded", [], (g, s) => g.set(s.inFlight));
    fromDatabase("dispatch_dlq_size", "Entries in the dead letter queue", ["project"], (g, s) => this.byProject(g, s.dlq));
    fromDatabase(
      "dispatch_retention_overdue_seconds",
      "How long past its removal the project's oldest finished message that retention should have removed is (0: none)",
      ["project"],
      (g, s) => this.byProject(g, s.retentionOverdue, "max"),
    );
    fromDatabase("dispatch_queue_lag", "Unfinished messages per queue", ["project", "queue"], (g, s) => {
      for (const queue of s.queues) g.inc({ project: this.projects.of(queue.project), queue: queue.name }, queue.lag);
    });
    fromDatabase("dispatch_workflow_runs", "Workflow runs by state", ["state"], (g, s) => {
      for (const run of s.runs) g.set({ state: run.state }, run.n);
    });
    fromDatabase("dispatch_database_connections", "Connections of Dispatch (every process) to its database, by state", ["state"], (g, s) => {
      for (const connection of s.connections) g.set({ state: connection.state }, connection.n);
    });
    fromDatabase(
      "dispatch_destination_circuits",
      "Destinations whose circuit is not closed, by state (OPEN, PROBING, GAVE_UP; HELD: closed but held by a 429), across every process",
      ["state"],
      (g, s) => {
        for (const state of ["OPEN", "PROBING", "GAVE_UP", "HELD"]) g.set({ state }, 0);
        for (const circuit of s.circuits) g.set({ state: circuit.state }, circuit.n);
      },
    );
    this.gauge(
      "dispatch_destination_slots",
      "This process's delivery requests in flight, by their destination's circuit state",
      ["circuit"],
      async (g) => {
        g.reset();
        for (const state of ["CLOSED", "OPEN", "PROBING", "GAVE_UP"]) g.set({ circuit: state }, 0);
        for (const [circuit, n] of this.slotsByCircuit()) g.inc({ circuit }, n);
      },
    );
    fromDatabase("dispatch_worker_heartbeat_age_seconds", "Seconds since this process's worker last beat its heartbeat", [], (g, s) => {
      if (s.heartbeatAge !== null) g.set(s.heartbeatAge);
    });
  }

  /** The scrape: this service's series and the process's runtime ones, in Prometheus text format. */
  async text(): Promise<string> {
    return Registry.merge([this.registry, runtimeMetrics()]).metrics();
  }

  /** The scrape's content type. */
  get contentType(): string {
    return this.registry.contentType;
  }

  private counter(name: string, help: string, labelNames: string[]) {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /**
   * Sets `g` to each project's figure, 0 for the default project when it has
   * none: counts add up under `other` (the projects past the labelled ones),
   * ages (`max`) keep the largest.
   */
  private byProject(g: Gauge, figures: { project: string; n: number }[], merge: "sum" | "max" = "sum"): void {
    const values = new Map<string, number>([[this.projects.of(DEFAULT_PROJECT), 0]]);
    for (const { project, n } of figures) {
      const label = this.projects.of(project);
      const before = values.get(label) ?? 0;
      values.set(label, merge === "sum" ? before + n : Math.max(before, n));
    }
    for (const [project, value] of values) g.set({ project }, value);
  }

  private gauge(name: string, help: string, labelNames: string[], collect: (gauge: Gauge) => Promise<void>) {
    new Gauge({ name, help, labelNames, registers: [this.registry], async collect() { await collect(this); } });
  }
}

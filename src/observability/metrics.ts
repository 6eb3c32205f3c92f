/**
 * Prometheus metrics (prom-client, the standard Node client): counters and
 * histograms the API and the worker feed as things happen, and gauges read
 * from the database when `/metrics` is scraped (what waits, what is in
 * flight, the DLQ, queue lag, workflow runs by state, database connections,
 * this process's worker heartbeat). Each service has its own registry, so
 * several in one process (tests) do not collide. What belongs to a project
 * (publishes, outcomes, what waits, the DLQ, queue lag) carries a `project`
 * label, its values bounded by project-label.ts.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Sql } from "../db/client";
import { DEFAULT_PROJECT } from "../db/vocabulary";
import { ProjectLabels } from "./project-label";

/** What a scrape reads from the database. */
interface DatabaseState {
  waiting: { project: string; n: number }[];
  inFlight: number;
  dlq: { project: string; n: number }[];
  queues: { project: string; name: string; lag: number }[];
  runs: { state: string; n: number }[];
  connections: { state: string; n: number }[];
  heartbeatAge: number | null;
  circuits: { state: string; n: number }[];
}

export class Metrics {
  readonly registry = new Registry();
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

  constructor(sql: Sql, heartbeatId: () => string | null) {
    collectDefaultMetrics({ register: this.registry, prefix: "dispatch_" });
    let state: Promise<DatabaseState> | null = null;
    // One query per scrape, shared by every gauge below.
    const read = () => (state ??= readState(sql, heartbeatId()).finally(() => setTimeout(() => (state = null), 100)));
    this.gauge("dispatch_messages_waiting", "Messages due (or held back by flow control or their destination) and not yet claimed", ["project"], async (g) =>
      this.byProject(g, (await read()).waiting));
    this.gauge("dispatch_messages_in_flight", "Messages claimed by workers and not yet recorded", [], async (g) => g.set((await read()).inFlight));
    this.gauge("dispatch_dlq_size", "Entries in the dead letter queue", ["project"], async (g) => this.byProject(g, (await read()).dlq));
    this.gauge("dispatch_queue_lag", "Unfinished messages per queue", ["project", "queue"], async (g) => {
      g.reset();
      for (const queue of (await read()).queues) g.inc({ project: this.projects.of(queue.project), queue: queue.name }, queue.lag);
    });
    this.gauge("dispatch_workflow_runs", "Workflow runs by state", ["state"], async (g) => {
      g.reset();
      for (const run of (await read()).runs) g.set({ state: run.state }, run.n);
    });
    this.gauge("dispatch_database_connections", "Connections of Dispatch (every process) to its database, by state", ["state"], async (g) => {
      g.reset();
      for (const connection of (await read()).connections) g.set({ state: connection.state }, connection.n);
    });
    this.gauge(
      "dispatch_destination_circuits",
      "Destinations whose circuit is not closed, by state (OPEN, PROBING, GAVE_UP; HELD: closed but held by a 429), across every process",
      ["state"],
      async (g) => {
        g.reset();
        for (const state of ["OPEN", "PROBING", "GAVE_UP", "HELD"]) g.set({ state }, 0);
        for (const circuit of (await read()).circuits) g.set({ state: circuit.state }, circuit.n);
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
    this.gauge("dispatch_worker_heartbeat_age_seconds", "Seconds since this process's worker last beat its heartbeat", [], async (g) => {
      const age = (await read()).heartbeatAge;
      if (age === null) g.reset();
      else g.set(age);
    });
  }

  private counter(name: string, help: string, labelNames: string[]) {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** Sets `g` to each project's count (the projects past the labelled ones summed under `other`); 0 for the default one when none. */
  private byProject(g: Gauge, counts: { project: string; n: number }[]): void {
    g.reset();
    g.set({ project: this.projects.of(DEFAULT_PROJECT) }, 0);
    for (const { project, n } of counts) g.inc({ project: this.projects.of(project) }, n);
  }

  private gauge(name: string, help: string, labelNames: string[], collect: (gauge: Gauge) => Promise<void>) {
    new Gauge({ name, help, labelNames, registers: [this.registry], async collect() { await collect(this); } });
  }
}

async function readState(sql: Sql, heartbeatId: string | null): Promise<DatabaseState> {
  const [row] = await sql<DatabaseState[]>`
    select
      (select coalesce(json_agg(json_build_object('project', project, 'n', n)), '[]') from (
        select project, count(*)::int as n from dispatch.messages where due_at <= now() or flow_parked or destination_parked group by project) w) as waiting,
      (select coalesce(sum(cardinality(message_ids)), 0)::int from dispatch.claims) as "inFlight",
      (select coalesce(json_agg(json_build_object('project', project, 'n', n)), '[]') from (
        select project, count(*)::int as n from dispatch.dlq group by project) d) as dlq,
      (select coalesce(json_agg(json_build_object('project', q.project, 'name', q.name, 'lag',
        (select count(*) from dispatch.messages m where m.project = q.project and m.pending_queue = q.name))), '[]')
        from dispatch.queues q) as queues,
      (select coalesce(json_agg(json_build_object('state', state, 'n', n)), '[]')
        from (select state, count(*)::int as n from dispatch.workflow_runs group by state) r) as runs,
      (select coalesce(json_agg(json_build_object('state', coalesce(state, 'unknown'), 'n', n)), '[]')
        from (select state, count(*)::int as n from pg_stat_activity
          where datname = current_database() and application_name = 'dispatch' group by state) a) as connections,
      (select extract(epoch from now() - heartbeat_at)::float8 from dispatch.workers where id = ${heartbeatId}) as "heartbeatAge",
      (select coalesce(json_agg(json_build_object('state', state, 'n', n)), '[]')
        from (select case when circuit = 'CLOSED' then 'HELD' else circuit end as state, count(*)::int as n
          from dispatch.destinations where (circuit <> 'CLOSED' or held_until is not null)
            and (circuit <> 'CLOSED' or held_until > now()) group by 1) c) as circuits`;
  return row!;
}

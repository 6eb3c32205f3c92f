/**
 * The overview: what is failing now, messages by state now and created in the
 * last hour, attempts per minute, the DLQ, queues, schedules, flow-control
 * keys and workflow runs by state. Refreshes itself.
 */
import type { Activity } from "../../../../domain/overview/activity";
import type { FailingDestination } from "../../../../domain/overview/failing-now";
import type { StateCounts } from "../../../../domain/overview/state-counts";
import { DLQ_COUNT_LIMIT, type Totals, TOTAL_COUNT_LIMIT } from "../../../../domain/overview/totals";
import type { Quota } from "../../../../domain/projects/quotas";
import { MESSAGE_STATES } from "../../../../db/vocabulary";
import { RUN_STATES } from "../../../../domain/workflows/logs/logs";
import { MinuteChart, StateBars } from "../../kit/charts";
import { Live } from "../../kit/components";
import { FailingNow } from "./failing-now";

/** What the overview shows, read in one snapshot. */
export interface Overview {
  messages: StateCounts;
  runs: StateCounts;
  hour: Activity;
  totals: Totals;
  /** The destinations with the most error attempts in the last hour. */
  failing: FailingDestination[];
  /** Destinations holding their messages back now, by circuit state (HELD: a 429's hold); null for a viewer of another project than the default (destinations are the operator's). */
  holding: Record<string, number> | null;
  /** The project's quotas (null: none) and the messages counted against its daily one today. */
  quota: Quota & { messagesToday: number };
}

/** The headline numbers, attempts per minute and the counts by state, refreshed in place. */
export const OverviewPage = (overview: Overview & { now: number }) => {
  const { messages, runs, hour, failing, now } = overview;
  return (
    <>
      <h1>Overview</h1>
      <Live url="/dashboard">
        <Stats {...overview} />
        <FailingNow destinations={failing} now={now} />
        <h2>Attempts per minute</h2>
        <MinuteChart minutes={hour.minutes} />
        <div class="grid" style="grid-template-columns: repeat(auto-fill, minmax(420px, 1fr))">
          <section>
            <h2>Messages by state now{messages.estimated && <span class="muted"> (estimated from table statistics)</span>}</h2>
            <StateBars counts={messages.counts} states={MESSAGE_STATES} label="Messages by state now" />
          </section>
          <section>
            <h2>Messages created in the last hour, by state</h2>
            <StateBars counts={hour.created} states={MESSAGE_STATES} label="Messages created in the last hour by state" />
          </section>
          <section>
            <h2>Workflow runs by state{runs.estimated && <span class="muted"> (estimated)</span>}</h2>
            <StateBars counts={runs.counts} states={RUN_STATES} label="Workflow runs by state" />
          </section>
        </div>
      </Live>
    </>
  );
};

/** The headline numbers, each linking to the list it counts. */
const Stats = ({ messages, runs, hour, totals, holding, quota }: Overview) => {
  const perMinute = hour.minutes.at(-1)!;
  const lastHourTotals = hour.minutes.reduce(
    (sum, m) => ({ delivered: sum.delivered + m.delivered, failed: sum.failed + m.failed }),
    { delivered: 0, failed: 0 },
  );
  const about = (estimated: boolean) => (estimated ? "≈ " : "");
  return (
    <div class="grid">
      <Stat
        label="Failed messages"
        href="/dashboard/messages?state=FAILED"
        value={`${about(messages.estimated)}${count(stillFailing(messages.counts.FAILED, totals.retried))}`}
        note={totals.retried > 0 ? `not counting ${upTo(totals.retried, DLQ_COUNT_LIMIT)} retried from the DLQ` : undefined}
      />
      <Stat label="Retrying" href="/dashboard/messages?state=RETRY" value={`${about(messages.estimated)}${count(messages.counts.RETRY)}`} />
      <Stat label="In the DLQ" href="/dashboard/dlq" value={upTo(totals.dlq, DLQ_COUNT_LIMIT)} />
      <Stat label="Delivered, last hour" href="/dashboard/messages?state=DELIVERED&since=1h" value={count(lastHourTotals.delivered)} />
      <Stat label="Failed, last hour" href="/dashboard/messages?state=FAILED&since=1h" value={count(lastHourTotals.failed)} />
      <Stat label="Delivered this minute" value={count(perMinute.delivered)} />
      <Stat label={`Queues (${upTo(totals.pausedQueues)} paused)`} href="/dashboard/queues" value={upTo(totals.queues)} />
      <Stat label={`Schedules (${upTo(totals.pausedSchedules)} paused)`} href="/dashboard/schedules" value={upTo(totals.schedules)} />
      <Stat
        label={`Flow-control keys (${upTo(totals.pausedFlowControlKeys)} paused)`}
        href="/dashboard/flow-control"
        value={upTo(totals.flowControlKeys)}
      />
      <Stat label="Workflow runs started" href="/dashboard/workflows?state=RUN_STARTED" value={`${about(runs.estimated)}${count(runs.counts.RUN_STARTED)}`} />
      {(quota.messagesPerDay !== null || quota.publishesPerSecond !== null) && (
        <Stat
          label="Messages today (UTC), against the project's quota"
          href="/dashboard/messages"
          value={quota.messagesPerDay === null ? count(quota.messagesToday) : `${count(quota.messagesToday)} of ${count(quota.messagesPerDay)}`}
          note={quota.publishesPerSecond === null ? undefined : `at most ${count(quota.publishesPerSecond)} publishes a second`}
        />
      )}
      {holding !== null && (
        <Stat
          label="Destinations holding their messages"
          href={`/dashboard/destinations${(holding.OPEN ?? 0) > 0 ? "?circuit=OPEN" : ""}`}
          value={count(Object.values(holding).reduce((sum, n) => sum + n, 0))}
          note={Object.entries(holding).map(([state, n]) => `${count(n)} ${HOLDING_WORDS[state] ?? state}`).join(", ") || undefined}
        />
      )}
    </div>
  );
};

/** What each state of a holding destination is called on the overview. */
const HOLDING_WORDS: Record<string, string> = { OPEN: "open", PROBING: "probing", GAVE_UP: "gave up", HELD: "held by a 429" };

const count = (n: number | undefined) => (n ?? 0).toLocaleString("en-US");

/** Failed messages but those retried from the DLQ: their retry is what may still fail, and counts as itself. */
const stillFailing = (failed: number | undefined, retried: number) => Math.max(0, (failed ?? 0) - retried);

/** A total counted up to `limit` (one more means more than the limit): "10,000+" past it. */
const upTo = (n: number, limit = TOTAL_COUNT_LIMIT) => (n > limit ? `${count(limit)}+` : count(n));

const Stat = ({ label, value, href, note }: { label: string; value: string; href?: string; note?: string }) => (
  <div class="stat" data-stat={label}>
    <div class="n">{href ? <a href={href}>{value}</a> : value}</div>
    <div class="l">{label}</div>
    {note && <div class="muted note">{note}</div>}
  </div>
);

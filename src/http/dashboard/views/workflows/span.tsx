/**
 * How long a step took, in words and as a bar on the run's time axis (plain
 * HTML and CSS: a track the width of the run, a bar placed at the step's
 * start, as long as the step), as Inngest's run timeline draws it.
 */
import type { FC } from "hono/jsx";
import type { Span } from "../../../../domain/workflows/logs/timeline";

/** The run's time axis: from its creation to its end (or now), stretched to hold every span. */
export interface Axis {
  start: number;
  end: number;
}

/** The axis from `start` to the latest of `end` and the spans' ends (an open span ends `now`). */
export function axisOf(start: number, end: number, spans: Iterable<Span>, now: number): Axis {
  let last = end;
  for (const span of spans) last = Math.max(last, span.end ?? now);
  return { start, end: Math.max(last, start + 1) };
}

/** A length of time in words: `340 ms`, `2.4 s`, `3 min 5 s`, `2 h 10 min`, `3 d 4 h`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const [s, min, h] = [Math.floor(ms / 1000), Math.floor(ms / 60_000), Math.floor(ms / 3_600_000)];
  if (ms < 3_600_000) return `${min} min ${s % 60} s`;
  if (ms < 86_400_000) return `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** "took 2.4 s", or "under way for 14 s" while the span is open (`verb` for what it is doing, e.g. "sleeping"). */
export const spanWords = (span: Span, now: number, verb = "under way") =>
  span.end === null ? `${verb} for ${durationText(Math.max(0, now - span.start))}` : `took ${durationText(span.end - span.start)}`;

/** The span's words and its bar on `axis`, in the timeline's `tone` (ok, bad, warn). */
export const SpanLine: FC<{ span: Span; axis: Axis; now: number; tone: string; verb?: string }> = ({ span, axis, now, tone, verb }) => {
  const length = axis.end - axis.start;
  const left = Math.min(100, Math.max(0, ((span.start - axis.start) / length) * 100));
  const width = Math.min(100 - left, Math.max(0, (((span.end ?? now) - span.start) / length) * 100));
  return (
    <div class="span" data-span={span.end === null ? "open" : "closed"}>
      <span class="span-track" aria-hidden="true">
        <span class={`span-bar ${tone}${span.end === null ? " open" : ""}`} style={`left:${left.toFixed(2)}%;width:${width.toFixed(2)}%`}></span>
      </span>
      <span class="span-words">{spanWords(span, now, verb)}</span>
    </div>
  );
};

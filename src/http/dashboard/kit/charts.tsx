/** Charts as inline SVG, drawn on the server: no script, no asset. */
import type { FC } from "hono/jsx";
import type { Minute } from "../../../domain/overview/activity";
import { utc } from "./components";

const COLORS = { delivered: "#1a7f37", retried: "#d4a72c", failed: "#c62828" };

/** Attempts per minute over the last hour: delivered, errors that were retried, and failures, stacked. */
export const MinuteChart: FC<{ minutes: Minute[] }> = ({ minutes }) => {
  const [width, height, bar] = [720, 140, 12];
  const top = Math.max(1, ...minutes.map((m) => m.delivered + m.errors));
  const scale = (n: number) => (n / top) * (height - 20);
  return (
    <figure>
      <svg class="chart" viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Attempts per minute, last hour">
        <text x="4" y="12" font-size="10" fill="#5d6b7c">
          {top} / min
        </text>
        {minutes.map((m, index) => {
          const x = index * bar + 1;
          const parts = [
            [m.delivered, COLORS.delivered, "delivered"],
            [m.errors - m.failed, COLORS.retried, "errors retried"],
            [m.failed, COLORS.failed, "failed"],
          ] as const;
          let y = height;
          return (
            <g>
              <title>{`${utc(m.at).slice(11, 16)}: ${m.delivered} delivered, ${m.errors - m.failed} retried, ${m.failed} failed`}</title>
              {parts.map(([n, color]) => {
                const h = scale(n);
                y -= h;
                return n > 0 ? <rect x={x} y={y} width={bar - 2} height={h} fill={color} /> : null;
              })}
            </g>
          );
        })}
      </svg>
      <figcaption class="legend">
        <span><i style={`background:${COLORS.delivered}`}></i>delivered</span>
        <span><i style={`background:${COLORS.retried}`}></i>error, retried</span>
        <span><i style={`background:${COLORS.failed}`}></i>failed</span>
        <span class="muted">per minute, last 60 minutes (UTC)</span>
      </figcaption>
    </figure>
  );
};

const STATE_COLORS: Record<string, string> = {
  CREATED: "#2f5bd3", RETRY: "#d4a72c", DELIVERED: "#1a7f37", FAILED: "#c62828", CANCELED: "#8c959f",
  RUN_STARTED: "#2f5bd3", RUN_SUCCESS: "#1a7f37", RUN_FAILED: "#c62828", RUN_CANCELED: "#8c959f",
};

/** One horizontal bar per state, labelled with its count. */
export const StateBars: FC<{ counts: Record<string, number>; states: readonly string[]; label: string }> = ({ counts, states, label }) => {
  const [width, row] = [420, 22];
  const top = Math.max(1, ...states.map((state) => counts[state] ?? 0));
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${states.length * row + 6}`} role="img" aria-label={label}>
      {states.map((state, index) => {
        const n = counts[state] ?? 0;
        const y = index * row + 4;
        return (
          <g>
            <text x="4" y={y + 14} font-size="12" fill="#1c2430">
              {state}
            </text>
            <rect x="110" y={y + 2} width={Math.max(n > 0 ? 2 : 0, (n / top) * 220)} height={row - 8} fill={STATE_COLORS[state] ?? "#8c959f"} />
            <text x={116 + (n / top) * 220} y={y + 14} font-size="12" fill="#5d6b7c">
              {n.toLocaleString("en-US")}
            </text>
          </g>
        );
      })}
    </svg>
  );
};

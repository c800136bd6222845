/** @jsxImportSource hono/jsx */
import type { Child, FC } from "hono/jsx";

/**
 * Time-series charts as inline SVG: no library and no script (the console's CSP allows neither).
 * Each chart scales to its container through its viewBox; every bar and point carries a <title>,
 * which browsers show on hover and screen readers read, and the figure's caption says what it shows.
 */

/** Colours of the stylesheet's palette (src/console/views/styles.ts), each AA on white. */
export const CHART_COLORS = {
  accent: "#0b57d0",
  ok: "#166c2e",
  bad: "#b3261e",
  warn: "#9a5b00",
  purple: "#6b2fa1",
  muted: "#57606a",
} as const;

export interface ChartSeries {
  label: string;
  color: string;
  /** One value per bucket; null where there is nothing to measure (a rate without calls). */
  values: readonly (number | null)[];
}

export interface ChartProps {
  /** A unique id on the page, for the caption's and the description's ids. */
  id: string;
  title: string;
  /** A sentence for the figure: what the chart shows in numbers, read instead of the drawing. */
  summary: string;
  /** The start of each bucket, ISO 8601. */
  times: readonly string[];
  series: readonly ChartSeries[];
  /** How a value reads in tooltips and on the axis. */
  format: (value: number) => string;
  /** The top of the y axis; the largest value (at least 1) when absent. */
  max?: number;
}

const WIDTH = 320;
const HEIGHT = 132;
const PLOT = { left: 34, right: WIDTH - 6, top: 8, bottom: HEIGHT - 20 };
const PLOT_WIDTH = PLOT.right - PLOT.left;
const PLOT_HEIGHT = PLOT.bottom - PLOT.top;

/** "14:00": buckets are whole hours (or minutes) in UTC, as the page says. */
function clock(iso: string): string {
  return iso.slice(11, 16);
}

function topOf(props: ChartProps): number {
  if (props.max !== undefined) return props.max;
  const values = props.series
    .flatMap((series) => series.values)
    .filter((value): value is number => value !== null);
  return Math.max(1, ...values);
}

const y = (value: number, top: number) => PLOT.bottom - (Math.min(value, top) / top) * PLOT_HEIGHT;

/** The frame every chart shares: gridlines, the y axis's top and zero, and three times below. */
const Frame: FC<{ props: ChartProps; top: number }> = ({ props, top }) => {
  const n = props.times.length;
  const ticks = n === 0 ? [] : [...new Set([0, Math.floor((n - 1) / 2), n - 1])];
  const slot = n === 0 ? 0 : PLOT_WIDTH / n;
  return (
    <g>
      {[0, 0.5, 1].map((share) => (
        <line
          x1={PLOT.left}
          x2={PLOT.right}
          y1={y(top * share, top)}
          y2={y(top * share, top)}
          stroke="#d0d7de"
          stroke-width={share === 0 ? 1 : 0.5}
        />
      ))}
      <text x={PLOT.left - 4} y={PLOT.top + 4} text-anchor="end" font-size="9" fill={CHART_COLORS.muted}>
        {props.format(top)}
      </text>
      <text x={PLOT.left - 4} y={PLOT.bottom} text-anchor="end" font-size="9" fill={CHART_COLORS.muted}>
        {props.format(0)}
      </text>
      {ticks.map((index) => (
        // The first and last times align with the plot's edges, so neither is cut off.
        <text
          x={index === 0 ? PLOT.left : index === n - 1 ? PLOT.right : PLOT.left + slot * index + slot / 2}
          y={HEIGHT - 6}
          text-anchor={index === 0 ? "start" : index === n - 1 ? "end" : "middle"}
          font-size="9"
          fill={CHART_COLORS.muted}
        >
          {clock(props.times[index] ?? "")}
        </text>
      ))}
    </g>
  );
};

/** The figure around a chart: its caption, the drawing, and a legend when it has several series. */
const Figure: FC<{ props: ChartProps; kind: "bars" | "lines"; children?: Child }> = ({
  props,
  kind,
  children,
}) => (
  <figure class="chart" aria-labelledby={`${props.id}-caption`}>
    <figcaption id={`${props.id}-caption`}>
      {props.title}
      <span class="meta"> · {props.summary}</span>
    </figcaption>
    <svg
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      width="100%"
      role="img"
      aria-labelledby={`${props.id}-title ${props.id}-desc`}
      data-chart={kind}
    >
      <title id={`${props.id}-title`}>{props.title}</title>
      <desc id={`${props.id}-desc`}>{props.summary}</desc>
      {children}
    </svg>
    {props.series.length > 1 ? (
      <ul class="legend">
        {props.series.map((series) => (
          <li>
            <i style={`background:${series.color}`} />
            {series.label}
          </li>
        ))}
      </ul>
    ) : null}
  </figure>
);

/** Counts per bucket as bars, side by side when there are several series. */
export const BarChart: FC<ChartProps> = (props) => {
  const top = topOf(props);
  const slot = props.times.length === 0 ? 0 : PLOT_WIDTH / props.times.length;
  const width = (slot * 0.8) / Math.max(1, props.series.length);
  return (
    <Figure props={props} kind="bars">
      <Frame props={props} top={top} />
      {props.times.map((time, index) =>
        props.series.map((series, position) => {
          const value = series.values[index] ?? null;
          if (value === null || value <= 0) return null;
          const height = PLOT.bottom - y(value, top);
          return (
            <rect
              x={(PLOT.left + slot * index + slot * 0.1 + width * position).toFixed(2)}
              y={y(value, top).toFixed(2)}
              width={width.toFixed(2)}
              height={Math.max(0.5, height).toFixed(2)}
              fill={series.color}
            >
              <title>{`${clock(time)} UTC · ${series.label}: ${props.format(value)}`}</title>
            </rect>
          );
        }),
      )}
    </Figure>
  );
};

/** A rate or level per bucket as a line; a bucket without a value breaks the line. */
export const LineChart: FC<ChartProps> = (props) => {
  const top = topOf(props);
  const slot = props.times.length === 0 ? 0 : PLOT_WIDTH / props.times.length;
  const x = (index: number) => (PLOT.left + slot * index + slot / 2).toFixed(2);
  return (
    <Figure props={props} kind="lines">
      <Frame props={props} top={top} />
      {props.series.map((series) => {
        let d = "";
        let drawing = false;
        series.values.forEach((value, index) => {
          if (value === null) {
            drawing = false;
            return;
          }
          d += `${drawing ? "L" : "M"}${x(index)} ${y(value, top).toFixed(2)} `;
          drawing = true;
        });
        return (
          <g>
            {d ? <path d={d.trim()} fill="none" stroke={series.color} stroke-width="1.5" /> : null}
            {series.values.map((value, index) =>
              value === null ? null : (
                <circle cx={x(index)} cy={y(value, top).toFixed(2)} r="2.2" fill={series.color}>
                  <title>{`${clock(props.times[index] ?? "")} UTC · ${series.label}: ${props.format(value)}`}</title>
                </circle>
              ),
            )}
          </g>
        );
      })}
    </Figure>
  );
};

/**
 * Time series on a time axis (the console's only recharts importer, with sparkline.tsx). No
 * animation, so a live refresh redraws in place without flicker; gaps (null) stay gaps.
 */
import { useComputedColorScheme } from '@mantine/core';
import {
  Area,
  CartesianGrid,
  ComposedChart,
  Line,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';

export interface Series {
  key: string;
  label: string;
  color: string;
  /** Drawn as a filled area instead of a line. */
  area?: boolean;
  /** Second (right) axis. */
  right?: boolean;
}

export interface TimeSeriesChartProps {
  data: Record<string, number | null>[];
  series: Series[];
  height?: number;
  format?: (value: number) => string;
  formatRight?: (value: number) => string;
  /** Visible window in ms; the data's own extent when absent. */
  domain?: [number, number];
  label: string;
}

const timeTick = (spanMs: number) => {
  const opts: Intl.DateTimeFormatOptions =
    spanMs > 3 * 86_400_000
      ? { month: '2-digit', day: '2-digit' }
      : spanMs > 86_400_000
        ? { weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false }
        : { hour: '2-digit', minute: '2-digit', hour12: false };
  const f = new Intl.DateTimeFormat(undefined, opts);
  return (value: number) => f.format(value);
};

const fullTime = new Intl.DateTimeFormat(undefined, {
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
  timeZoneName: 'short',
});

export function TimeSeriesChart({
  data,
  series,
  height = 180,
  format = (v) => String(v),
  formatRight,
  domain,
  label,
}: TimeSeriesChartProps) {
  const scheme = useComputedColorScheme('dark');
  const grid = scheme === 'dark' ? '#2c2e33' : '#e9ecef';
  const text = scheme === 'dark' ? '#909296' : '#495057';
  const first = data[0]?.t ?? 0;
  const last = data[data.length - 1]?.t ?? 0;
  const span = domain ? domain[1] - domain[0] : (last ?? 0) - (first ?? 0);
  const hasRight = series.some((s) => s.right);
  return (
    <div className="console-chart" role="img" aria-label={label} data-testid="chart">
      <ResponsiveContainer width="100%" height={height}>
        <ComposedChart
          data={data}
          margin={{ top: 6, right: hasRight ? 4 : 12, bottom: 0, left: 0 }}
        >
          <CartesianGrid stroke={grid} strokeDasharray="2 4" vertical={false} />
          <XAxis
            dataKey="t"
            type="number"
            scale="time"
            domain={domain ?? ['dataMin', 'dataMax']}
            tickFormatter={timeTick(span)}
            stroke={text}
            fontSize={11}
            minTickGap={40}
            tickCount={7}
          />
          <YAxis
            yAxisId="left"
            stroke={text}
            fontSize={11}
            width={56}
            tickFormatter={(v: number) => format(v)}
          />
          {hasRight ? (
            <YAxis
              yAxisId="right"
              orientation="right"
              stroke={text}
              fontSize={11}
              width={44}
              tickFormatter={(v: number) => (formatRight ?? format)(v)}
            />
          ) : null}
          <Tooltip
            isAnimationActive={false}
            labelFormatter={(v) => fullTime.format(Number(v))}
            formatter={(value, name, item) => {
              const s = series.find((x) => x.key === item.dataKey);
              const f = s?.right ? (formatRight ?? format) : format;
              return [typeof value === 'number' ? f(value) : '–', s?.label ?? String(name)];
            }}
            contentStyle={{
              background: scheme === 'dark' ? '#1a1b1e' : '#fff',
              border: `1px solid ${grid}`,
              fontSize: 12,
            }}
          />
          {series.map((s) =>
            s.area ? (
              <Area
                key={s.key}
                yAxisId={s.right ? 'right' : 'left'}
                dataKey={s.key}
                name={s.label}
                stroke={s.color}
                fill={s.color}
                fillOpacity={0.18}
                isAnimationActive={false}
                connectNulls={false}
                type="linear"
                dot={data.length < 3}
              />
            ) : (
              <Line
                key={s.key}
                yAxisId={s.right ? 'right' : 'left'}
                dataKey={s.key}
                name={s.label}
                stroke={s.color}
                strokeWidth={1.5}
                isAnimationActive={false}
                connectNulls={false}
                type="linear"
                dot={data.length < 3}
              />
            ),
          )}
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}

/** A tiny per-row bar strip (plain SVG; no chart library needed for 10 bars). */
export function Sparkline({
  values,
  max,
  label,
  width = 160,
  height = 18,
}: {
  values: number[];
  max: number;
  label: string;
  width?: number;
  height?: number;
}) {
  const n = Math.max(values.length, 10);
  const bar = width / n;
  return (
    <svg width={width} height={height} role="img" aria-label={label}>
      {values.map((v, i) => {
        const h = Math.max(1, (v / max) * height);
        return (
          <rect
            key={i}
            x={i * bar + 1}
            y={height - h}
            width={Math.max(1, bar - 2)}
            height={h}
            fill={v / max > 0.66 ? '#fa5252' : v / max > 0.33 ? '#fab005' : '#40c057'}
          />
        );
      })}
    </svg>
  );
}

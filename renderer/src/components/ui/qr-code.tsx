/** A QR code drawn as SVG rectangles from the text (no image, no markup). */
import qrcode from 'qrcode-generator';
import { useMemo } from 'react';

export function QrCode({
  text,
  size = 180,
  label,
}: {
  text: string;
  size?: number;
  label: string;
}) {
  const { count, cells } = useMemo(() => {
    const qr = qrcode(0, 'M');
    qr.addData(text);
    qr.make();
    const n = qr.getModuleCount();
    const dark: [number, number][] = [];
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) dark.push([r, c]);
    return { count: n, cells: dark };
  }, [text]);
  const quiet = 4;
  const total = count + quiet * 2;
  return (
    <svg
      width={size}
      height={size}
      viewBox={`0 0 ${total} ${total}`}
      role="img"
      aria-label={label}
      shapeRendering="crispEdges"
    >
      <rect width={total} height={total} fill="#fff" />
      {cells.map(([r, c]) => (
        <rect key={`${r}:${c}`} x={c + quiet} y={r + quiet} width={1} height={1} fill="#000" />
      ))}
    </svg>
  );
}

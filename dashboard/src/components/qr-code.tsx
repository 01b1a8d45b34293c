import { useMemo } from 'preact/hooks';
import { encode } from 'uqr';

/** A QR code drawn in the browser as SVG (no image request, nothing sent anywhere), `data` unaltered. */
export function QrCode({ data, label }: { data: string; label: string }) {
  const qr = useMemo(() => encode(data, { ecc: 'M', border: 2 }), [data]);
  let path = '';
  qr.data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (dark) path += `M${x} ${y}h1v1h-1z`;
    });
  });
  return (
    <svg viewBox={`0 0 ${qr.size} ${qr.size}`} role="img" aria-label={label} shape-rendering="crispEdges">
      <rect width={qr.size} height={qr.size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}

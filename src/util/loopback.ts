/** Loopback addresses and Host headers: the console and GET /metrics are open only there. */

/** Whether a host is a loopback address (the console and /metrics are open by default only there). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::ffff:127.0.0.1';
}

/** The host name of a Host header (`[::1]:3000` → `::1`, `localhost:3000` → `localhost`). */
export function hostOf(header: string | undefined): string {
  const h = (header ?? '').trim();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  return h.replace(/:\d*$/, '');
}

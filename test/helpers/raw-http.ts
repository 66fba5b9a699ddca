import { connect } from 'node:net';

/**
 * Sends raw bytes on a new connection and collects everything until the server closes it;
 * `end: true` closes the write side right after (a half-close, as curl and proxies may do).
 */
export function raw(port: number, bytes: string, { end = false } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => (text += c));
    s.on('close', () => resolve(text));
    s.on('error', reject);
    s.write(bytes);
    if (end) s.end();
  });
}

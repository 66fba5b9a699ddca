import { TRACE_REASONS, isTraceReason } from '../runtime/index.js';

/** Markdown's code marks, which a page shows as plain text. Internal. */
const plain = (s: string) => s.replace(/`/g, '');

/**
 * The words for a trace reason code, from the runtime's catalogue of trace reasons (what it
 * means, what to do); an unknown code is shown as it is.
 */
export function reasonWords(code: string | undefined): { code: string; meaning: string; todo?: string } {
  const c = code ?? 'unknown';
  if (!isTraceReason(c)) return { code: c, meaning: c.replace(/_/g, ' ') };
  const info = TRACE_REASONS[c];
  return { code: c, meaning: plain(info.meaning), todo: plain(info.todo) };
}

/** Markup that is already safe: made only by `html` (its values escaped) or `raw`. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Escapes text for HTML content and quoted attribute values. Internal. */
function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** Markup the caller vouches for (a constant of this code). Internal. */
export const raw = (text: string): SafeHtml => new SafeHtml(text);

type Part = SafeHtml | string | number | boolean | null | undefined | readonly Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(v);
}

/**
 * A template tag for markup: every value is escaped unless it is itself `html` (lists are
 * joined), so user text — messages, names, notes — is always shown as text.
 *
 * @example html`<p>${message.content}</p>` // "<script>" is shown, not run
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** A PIN as typed by a person, in the form the server stores (API.md "PIN codes"): trimmed, upper-case. */
export function normalizePin(pin: string): string {
  return pin.trim().toUpperCase();
}

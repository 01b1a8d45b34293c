/** CSV export (RFC 4180). No DOM here: the Node tests import this module. */

export type Cell = string | number | boolean | null | undefined;

/**
 * A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, carriage return first) is prefixed
 * with `'` (OWASP, "CSV Injection"): references and descriptions are the merchant's customers' text.
 */
function cell(value: Cell): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function toCsv(rows: readonly (readonly Cell[])[]): string {
  return `${rows.map((row) => row.map(cell).join(',')).join('\r\n')}\r\n`;
}

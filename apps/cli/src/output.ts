// What a command prints: JSON for scripts (--json), a table or lines for people.
export interface Table {
  columns: string[];
  rows: unknown[][];
  /** Lines printed under the table. */
  footer?: string[];
}

export interface Result {
  /** Printed as is with --json. */
  json: unknown;
  /** For people: a table, or prepared text. Defaults to the JSON. */
  human?: Table | string;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function renderTable(table: Table): string {
  const rows = table.rows.map((row) => row.map(cell));
  const widths = table.columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(table.columns.map((c) => c.toUpperCase())), ...rows.map(line), ...(table.footer ?? [])].join('\n');
}

/** A record as aligned "field  value" lines. */
export function renderRecord(record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`)
    .join('\n');
}

export function render(result: Result, json: boolean): string {
  if (json || result.human === undefined) return JSON.stringify(result.json, null, 2);
  return typeof result.human === 'string' ? result.human : renderTable(result.human);
}

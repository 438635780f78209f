// The pieces every view shares: a failed call's message, loading a view's data, a table, a form
// whose refused fields show the server's message beside them, and the workspace picker. Text only:
// nothing here sets HTML.
import { type FormEvent, type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';

/** A failed call's message (the server's, with its reason), announced to screen readers. */
export function ErrorMessage({ error }: { error: ServerError }) {
  return (
    <p className="error" role="alert">
      {error.message}
      {error.reason ? `: ${error.reason}` : ''}
    </p>
  );
}

export interface Loaded<T> {
  data: T | null;
  error: ServerError | null;
  reload: () => Promise<void>;
}

/** A view's data: loaded when `load` changes (wrap it in useCallback), and again on reload(). */
export function useLoad<T>(load: (() => Promise<T>) | null): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ServerError | null>(null);
  // Only the latest call's answer is shown: one for a workspace picked before may answer last.
  const latest = useRef(0);
  const reload = useCallback(async () => {
    if (!load) return;
    const call = ++latest.current;
    try {
      const answer = await load();
      if (call !== latest.current) return;
      setData(answer);
      setError(null);
    } catch (e) {
      if (call === latest.current) setError(describeError(e));
    }
  }, [load]);
  useEffect(() => {
    setData(null);
    void reload();
  }, [reload]);
  return { data, error, reload };
}

export interface Column<T> {
  header: string;
  /** A header read by screen readers only (an actions column). */
  hidden?: boolean;
  cell: (row: T) => ReactNode;
  className?: string;
}

/** A table of rows, or what is loading, or that there are none. */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  testId,
  empty = 'None yet.',
}: {
  caption: string;
  columns: Column<T>[];
  rows: T[] | null;
  rowKey: (row: T) => string;
  testId: string;
  empty?: string;
}) {
  if (rows === null) return <p className="status">Loading…</p>;
  return (
    <table data-testid={testId}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" key={c.header}>
              {c.hidden ? <span className="visually-hidden">{c.header}</span> : c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={columns.length} className="status">
              {empty}
            </td>
          </tr>
        ) : (
          rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.header} className={c.className}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

export interface Field {
  /** The input's name: the operation's field it fills, so the server's refusal of it lands beside it. */
  name: string;
  label: string;
  type?: 'text' | 'number' | 'password' | 'select' | 'textarea' | 'checkbox';
  options?: { value: string; label: string }[];
  required?: boolean;
  /** The field's place in the operation's input when it is not `name` (a nested one: "config.model"). */
  path?: string;
  hint?: string;
  initial?: string;
  step?: string;
  min?: string;
}

export type Values = Record<string, string>;

const initialValues = (fields: Field[]): Values => Object.fromEntries(fields.map((f) => [f.name, f.initial ?? (f.type === 'select' ? (f.options?.[0]?.value ?? '') : '')]));

/**
 * Splits a refusal between the fields: each refused field's message (error.metadata.issues) beside
 * it, and a reason that starts with a field's name (the operation's own, as in "slug taken") beside
 * that one; the rest under the form.
 */
export function placeError(error: ServerError, fields: Field[]): { byField: Record<string, string>; rest: ServerError | null } {
  const byField: Record<string, string> = {};
  const pathOf = (f: Field) => f.path ?? f.name;
  const unplaced = (error.issues ?? []).filter((issue) => {
    const field = fields.find((f) => issue.path === pathOf(f) || issue.path.startsWith(`${pathOf(f)}.`));
    if (!field) return true;
    byField[field.name] = byField[field.name] ? `${byField[field.name]}; ${issue.message}` : issue.message;
    return false;
  });
  if (!error.issues && error.reason) {
    const reason = error.reason;
    const named = fields.find((f) => new RegExp(`^${pathOf(f).split('.').pop()}([^a-z_]|$)`).test(reason));
    if (named) return { byField: { [named.name]: reason }, rest: null };
  }
  if (error.issues && unplaced.length === 0) return { byField, rest: null };
  const rest: ServerError = { ...error };
  if (unplaced.length > 0) rest.reason = unplaced.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  return { byField, rest };
}

/**
 * A form of labelled fields. On submit it calls `submit` with the values; a refusal is shown beside
 * the fields it names (the server's own message), and the values stay for correcting them.
 */
export function Form({
  title,
  fields,
  submit,
  submitLabel,
  onDone,
  keep = false,
}: {
  title: string;
  fields: Field[];
  submit: (values: Values) => Promise<unknown>;
  submitLabel: string;
  onDone?: () => void;
  /** Keep the values after a success (a filter), rather than clearing the form for the next one. */
  keep?: boolean;
}) {
  const [values, setValues] = useState<Values>(() => initialValues(fields));
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<{ byField: Record<string, string>; rest: ServerError | null } | null>(null);
  const id = useId();

  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setRefused(null);
    try {
      await submit(values);
      if (!keep) setValues(initialValues(fields));
      onDone?.();
    } catch (e) {
      setRefused(placeError(describeError(e), fields));
    } finally {
      setBusy(false);
    }
  };

  return (
    // noValidate: the server judges the input, and its message is the one shown beside the field.
    <form className="create" onSubmit={onSubmit} aria-labelledby={`${id}-title`} noValidate>
      <h2 id={`${id}-title`}>{title}</h2>
      {fields.map((f) => {
        const fieldId = `${id}-${f.name}`;
        const error = refused?.byField[f.name];
        const described = [f.hint ? `${fieldId}-hint` : '', error ? `${fieldId}-error` : ''].filter(Boolean).join(' ') || undefined;
        const common = {
          id: fieldId,
          name: f.name,
          disabled: busy,
          'aria-invalid': error ? true : undefined,
          'aria-describedby': described,
        };
        const set = (value: string) => setValues((v) => ({ ...v, [f.name]: value }));
        let input: ReactNode;
        if (f.type === 'select')
          input = (
            <select {...common} value={values[f.name]} onChange={(e) => set(e.target.value)}>
              {(f.options ?? []).map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          );
        else if (f.type === 'textarea') input = <textarea {...common} rows={3} value={values[f.name]} onChange={(e) => set(e.target.value)} />;
        else if (f.type === 'checkbox')
          input = <input {...common} type="checkbox" checked={values[f.name] === 'true'} onChange={(e) => set(e.target.checked ? 'true' : '')} />;
        else
          input = (
            <input
              {...common}
              type={f.type ?? 'text'}
              required={f.required}
              step={f.step}
              min={f.min}
              autoComplete={f.type === 'password' ? 'off' : undefined}
              value={values[f.name]}
              onChange={(e) => set(e.target.value)}
            />
          );
        return (
          <div className={f.type === 'checkbox' ? 'field check' : 'field'} key={f.name}>
            <label htmlFor={fieldId}>{f.label}</label>
            {input}
            {f.hint ? (
              <span className="hint" id={`${fieldId}-hint`}>
                {f.hint}
              </span>
            ) : null}
            {error ? (
              <span className="field-error" id={`${fieldId}-error`} role="alert">
                {error}
              </span>
            ) : null}
          </div>
        );
      })}
      <button type="submit" disabled={busy}>
        {submitLabel}
      </button>
      {refused?.rest ? <ErrorMessage error={refused.rest} /> : null}
    </form>
  );
}

/** A list of comma-separated entries, or null when there are none. */
export const listOf = (text: string): string[] | null => {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : null;
};

/** A number field's value: null when empty, else the number (the server judges it). */
export const numberOf = (text: string): number | null => (text.trim() === '' ? null : Number(text));

export const usd = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `$${n.toFixed(2)}`);

export const when = (iso: string | null) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '—');

type Workspace = { id: string; name: string; slug: string; is_default: boolean };

/**
 * The organization's workspaces (the first hundred), and which one a view shows: the default
 * workspace until another is picked.
 */
export function useWorkspace(session: Session): { workspaces: Workspace[] | null; workspaceId: string | null; pick: (id: string) => void; error: ServerError | null } {
  const load = useCallback(async () => (await session.client.workspaces.list.query({ limit: 100 })).data, [session]);
  const { data, error } = useLoad(load);
  const [picked, pick] = useState<string | null>(null);
  const workspaceId = picked ?? data?.find((w) => w.is_default)?.id ?? data?.[0]?.id ?? null;
  return { workspaces: data, workspaceId, pick, error };
}

export function WorkspacePicker({ workspaces, workspaceId, pick }: { workspaces: Workspace[] | null; workspaceId: string | null; pick: (id: string) => void }) {
  const id = useId();
  if (!workspaces) return null;
  return (
    <div className="field picker">
      <label htmlFor={id}>Workspace</label>
      <select id={id} name="workspace" value={workspaceId ?? ''} onChange={(e) => pick(e.target.value)}>
        {workspaces.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name} ({w.slug})
          </option>
        ))}
      </select>
    </div>
  );
}

/** A view's heading and its contents. */
export function Page({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id}>
      <h1 id={id}>{title}</h1>
      {children}
    </section>
  );
}

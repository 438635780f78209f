// Named parameters for raw statements: `:organization_id` in the text, values by name. PostgreSQL's
// protocol knows only positional ones ($1, $2, ...), so a statement's text is rewritten once, when it
// is declared (namedStatement), and each call puts its values in that order: the text sent, and so
// the named prepared statement, is the same on every call.
//
// A name is `:` then a letter or underscore, then letters, digits or underscores. Not a name: a
// cast (`::text`), anything inside a string literal ('12:00'), a quoted identifier ("a:b"), a
// dollar-quoted string ($$...$$, $tag$...$tag$) or a comment. The same name used twice is one
// parameter. A text with both named and positional ($1) parameters is refused.
//
// yesql (the npm package) does the same rewrite, but on every call and over the whole text (a ':'
// inside a string literal is taken for a name), with a new $n for each use of a name: neither fits a
// statement prepared once by name.

/** A statement's text with its named parameters made positional, and the names in $1.. order. */
export interface CompiledParameters {
  text: string;
  names: readonly string[];
}

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;

/** Rewrites `:name` parameters into `$n` ones (see the file's comment for what is not a name). */
export function compileNamedParameters(sql: string): CompiledParameters {
  const names: string[] = [];
  let out = '';
  let i = 0;
  const copyUntil = (end: string, from: number): number => {
    const at = sql.indexOf(end, from);
    const stop = at < 0 ? sql.length : at + end.length;
    out += sql.slice(i, stop);
    return stop;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === "'") {
      // A string literal; '' inside it is a quote, which the scan handles as two literals in a row.
      i = copyUntil("'", i + 1);
    } else if (c === '"') {
      i = copyUntil('"', i + 1);
    } else if (c === '-' && next === '-') {
      i = copyUntil('\n', i + 2);
    } else if (c === '/' && next === '*') {
      i = copyUntil('*/', i + 2);
    } else if (c === '$') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag) {
        i = copyUntil(tag[0], i + tag[0].length);
      } else if (next !== undefined && /[0-9]/.test(next)) {
        throw new Error(`a statement with named parameters has a positional one too ($${next}...): ${sql.slice(0, 120)}`);
      } else {
        out += c;
        i += 1;
      }
    } else if (c === ':' && next === ':') {
      out += '::';
      i += 2;
    } else if (c === ':' && next !== undefined && NAME_START.test(next)) {
      let end = i + 2;
      while (end < sql.length && NAME_PART.test(sql[end]!)) end += 1;
      const name = sql.slice(i + 1, end);
      let index = names.indexOf(name);
      if (index < 0) index = names.push(name) - 1;
      out += `$${index + 1}`;
      i = end;
    } else {
      out += c;
      i += 1;
    }
  }
  return { text: out, names };
}

/** A named statement's values in $1.. order; throws on a name with no value, or a value with no name. */
export function positionalValues(statementName: string, names: readonly string[], values: Readonly<Record<string, unknown>>): unknown[] {
  const ordered = new Array<unknown>(names.length);
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (!(name in values)) throw new Error(`statement ${statementName}: no value for :${name}`);
    ordered[i] = values[name];
  }
  const given = Object.keys(values).length;
  if (given !== names.length) {
    const unknown = Object.keys(values).filter((key) => !names.includes(key));
    throw new Error(`statement ${statementName}: values with no parameter of that name: ${unknown.join(', ')}`);
  }
  return ordered;
}

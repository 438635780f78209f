// The layers of apps/api/src, counted from its imports (`pnpm lint` runs it; docs/development.md#layers).
// It prints the upward imports (a file importing a file of a higher room in ROOMS' order), the import
// circles across rooms, startServer's length and the files that name each byte route. It fails on an
// upward import that lint/layers-allowed.json does not list, and on a listed one that is gone (so the
// list only shrinks: `--prune` drops the gone ones), and on a room ROOMS does not place.
// Type-only imports (`import type`, `export type ... from`, `typeof import(...)`) count like the
// others: they erase at compile time, but the lower room still depends on the higher room's shapes.
// The output gives their number apart. (`import { type X }` loads the module under
// verbatimModuleSyntax, so it is not type-only.)
// Plain Node with the TypeScript compiler's parser: it runs on a fresh clone, with nothing built.
//   node scripts/layers.mjs [--verbose] [--json] [--prune] [--src <dir>] [--tests <dir>] [--allowed <file>]
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The order, lowest first: a file may import its own room, a room of the same rank, or a lower one.
 * A room is a folder of src/ (each module's folder is a room of its own, at the modules' rank) or a
 * root file; `composition` is the root files that build and start the server.
 */
export const ROOMS = [
  { room: 'process', rank: 0, why: 'what node and V8 are given before any code of ours runs: it imports nothing of ours' },
  { room: 'lib', rank: 1, why: 'what every layer shares (errors, logger, metrics, caches): it knows no caller and no domain' },
  { room: 'upstream', rank: 1, why: 'the rules for reaching a URL the server was given: a library like lib/, it knows no setting or caller' },
  { room: 'config.ts', rank: 2, why: 'the one reader of process.env: typed settings that everything above is given' },
  { room: 'storage', rank: 3, why: 'the stores of bytes (local, S3) and their sweep: infrastructure given its settings, no caller' },
  { room: 'jobs', rank: 3, why: 'the job runner: runs work it is handed, knows no domain' },
  { room: 'health', rank: 3, why: 'whether the database is there: infrastructure, no caller' },
  { room: 'access', rank: 4, why: 'who calls and what they may reach: the tenancy every procedure and route asks' },
  { room: 'limits', rank: 5, why: "counters and the API's rate limits: they count per caller (access), and the procedures and routes call them" },
  { room: 'trpc', rank: 6, why: 'the base procedures: authentication and an access rule, below the modules that use them' },
  { room: 'raw-routes', rank: 6, why: "beside trpc/: what the byte-stream routes share (their contract's shape, ranges, error answers)" },
  { room: 'modules', rank: 7, why: "each domain's routers, services, statements and byte routes (modules/<x> is a room of its own)" },
  { room: 'http', rank: 8, why: 'the outermost layer of the request: the REST adapter, the mounts, OpenAPI, request log' },
  {
    room: 'statements.ts',
    rank: 9,
    why: "the package's export of the statements the services make, which the bench's database floors make too: it names the modules' builders",
  },
  {
    room: 'composition',
    rank: 9,
    why: 'the root files (server.ts, app.ts, router.ts, modules.ts, cache-events.ts, main.ts, index.ts, openapi-file.ts): they compose the server, or write its OpenAPI document',
  },
  { room: 'backup', rank: 10, why: "the CLI's backup and restore: an entry of its own beside the server, which it reads; nothing imports it" },
  { room: 'testing', rank: 10, why: 'test and bench support: it boots the whole server; nothing of the product imports it' },
];

/** The root files of the composition room. */
export const COMPOSITION = ['server.ts', 'app.ts', 'router.ts', 'modules.ts', 'cache-events.ts', 'main.ts', 'index.ts', 'openapi-file.ts'];

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RANK = new Map(ROOMS.map((r) => [r.room, r.rank]));

/** The room of a file, from its path relative to src/ ('/'-separated). */
export function roomOf(file) {
  const parts = file.split('/');
  if (parts.length === 1) return COMPOSITION.includes(file) ? 'composition' : file;
  if (parts[0] === 'modules' && parts.length > 2) return `modules/${parts[1]}`;
  return parts[0];
}

/** The rank of a room (modules/<x> has the modules' rank), or undefined when ROOMS does not place it. */
export function rankOf(room) {
  return RANK.get(room.startsWith('modules/') ? 'modules' : room);
}

const sourceFiles = (dir) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|tsx|mts)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();

const parse = (file) => ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);

/** Every import of a file: its specifier and whether it is erased at compile time. */
function importsOf(source) {
  const found = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(node) ? Boolean(node.importClause?.isTypeOnly) : node.isTypeOnly;
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) found.push({ specifier: expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) found.push({ specifier: argument.text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const RESOLUTION = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowJs: false };

/** The file-level import graph of src/: edges between its own files. */
export function importGraph(src) {
  const files = sourceFiles(src);
  const edges = [];
  for (const file of files) {
    const absolute = path.join(src, file);
    for (const { specifier, typeOnly } of importsOf(parse(absolute))) {
      if (!specifier.startsWith('.')) continue;
      const resolved = ts.resolveModuleName(specifier, absolute, RESOLUTION, ts.sys).resolvedModule?.resolvedFileName;
      if (!resolved) throw new Error(`${file}: cannot resolve ${specifier}`);
      const target = path.relative(src, resolved).split(path.sep).join('/');
      if (target.startsWith('..')) continue;
      edges.push({ from: file, to: target, typeOnly });
    }
  }
  // A file importing another twice (a type and a value) is one edge, runtime if either is.
  const byPair = new Map();
  for (const e of edges) {
    const key = `${e.from} -> ${e.to}`;
    const seen = byPair.get(key);
    byPair.set(key, seen ? { ...seen, typeOnly: seen.typeOnly && e.typeOnly } : e);
  }
  return { files, edges: [...byPair.values()] };
}

/** How an edge is written in the allowed list. */
export const edgeKey = (e) => `${e.from} -> ${e.to}${e.typeOnly ? ' (type)' : ''}`;

/** Strongly connected components (Tarjan) of a graph given as node -> successors, those of more than one node. */
export function circles(graph) {
  let index = 0;
  const indexOf = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const connect = (v) => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), indexOf.get(w)));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indexOf.has(v)) connect(v);
  return found.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]));
}

const roomGraph = (edges) => {
  const graph = new Map();
  for (const e of edges) {
    const from = roomOf(e.from);
    const to = roomOf(e.to);
    if (from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from).add(to);
  }
  return graph;
};

/** startServer's length in lines (its declaration, first line to last), or null when server.ts has none. */
export function startServerLines(src) {
  const file = path.join(src, 'server.ts');
  if (!existsSync(file)) return null;
  const source = parse(file);
  let lines = null;
  const visit = (node) => {
    const named =
      (ts.isFunctionDeclaration(node) && node.name?.text === 'startServer') ||
      (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === 'startServer');
    if (named && lines === null) {
      const line = (pos) => source.getLineAndCharacterOfPosition(pos).line;
      lines = line(node.end) - line(node.getStart(source)) + 1;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

const stringOf = (node, source) => {
  if (ts.isStringLiteralLike(node)) return node.text;
  throw new Error(`${source.fileName}: a raw operation's method and path are written as string literals`);
};

/**
 * The byte routes: every object declared `satisfies RawOperation`, with its constant's name, method
 * and path (OpenAPI's `{name}` form).
 */
export function byteRoutes(src, files) {
  const routes = [];
  for (const file of files) {
    const source = parse(path.join(src, file));
    const visit = (node) => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
        let value = node.initializer;
        let declared = false;
        while (ts.isSatisfiesExpression(value) || ts.isAsExpression(value) || ts.isParenthesizedExpression(value)) {
          if (ts.isSatisfiesExpression(value) && ts.isTypeReferenceNode(value.type) && value.type.typeName.getText(source) === 'RawOperation') declared = true;
          value = value.expression;
        }
        if (declared && ts.isObjectLiteralExpression(value)) {
          const property = (name) => value.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(source) === name)?.initializer;
          const method = property('method');
          const routePath = property('path');
          if (method && routePath) routes.push({ name: node.name.text, file, method: stringOf(method, source), path: stringOf(routePath, source) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return routes;
}

const METHOD = /^(GET|PUT|POST|PATCH|DELETE|HEAD|OPTIONS) /;
const PREFIX = /^\/(api\/v1|internal)(?=\/)/;

/** Whether a piece of string in code names a route's path: its OpenAPI or express form, after an optional method and mount prefix. */
function namesPath(text, route, methodBeside) {
  const method = METHOD.exec(text)?.[1] ?? methodBeside;
  if (method && method !== route.method) return false;
  const rest = text.replace(METHOD, '').replace(PREFIX, '');
  return rest === route.path || rest === route.path.replace(/\{(\w+)\}/g, ':$1');
}

/** The files of a directory (src or tests) whose code names each route: its constant, or its path in a string (comments do not count). */
export function routeNamers(dir, files, routes) {
  const named = new Map(routes.map((r) => [r.name, new Set()]));
  for (const file of files) {
    const source = parse(path.join(dir, file));
    const visit = (node) => {
      for (const route of routes) {
        if (ts.isIdentifier(node) && node.text === route.name) named.get(route.name).add(file);
        const piece =
          ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node) || ts.isTemplateHead(node) ? node.text : null;
        if (piece === null) continue;
        // `{ method: 'GET', path: '/files' }` (a procedure's meta) names GET /files, not POST /files.
        const object = ts.isPropertyAssignment(node.parent) && node.parent.name.getText(source) === 'path' ? node.parent.parent : null;
        const methodProperty = object?.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(source) === 'method');
        const methodBeside = methodProperty && ts.isStringLiteralLike(methodProperty.initializer) ? methodProperty.initializer.text.toUpperCase() : undefined;
        if (namesPath(piece, route, methodBeside)) named.get(route.name).add(file);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return new Map([...named].map(([name, set]) => [name, [...set].sort()]));
}

/** Everything the script reports, for src/ and the tests beside it. */
export function analyse({ src, tests }) {
  const { files, edges } = importGraph(src);
  const unplaced = [...new Set(files.map(roomOf))].filter((room) => rankOf(room) === undefined).sort();
  const upward = edges
    .filter((e) => (rankOf(roomOf(e.to)) ?? -1) > (rankOf(roomOf(e.from)) ?? Number.POSITIVE_INFINITY))
    .sort((a, b) => edgeKey(a).localeCompare(edgeKey(b)));
  const roomEdges = new Map();
  for (const e of upward) {
    const key = `${roomOf(e.from)} -> ${roomOf(e.to)}`;
    const seen = roomEdges.get(key) ?? { from: roomOf(e.from), to: roomOf(e.to), files: 0, typeOnly: true };
    roomEdges.set(key, { ...seen, files: seen.files + 1, typeOnly: seen.typeOnly && e.typeOnly });
  }
  const routes = byteRoutes(src, files);
  const testFiles = tests && existsSync(tests) ? sourceFiles(tests) : [];
  const inSrc = routeNamers(src, files, routes);
  const inTests = routeNamers(tests ?? src, testFiles, routes);
  return {
    files: files.length,
    edges: edges.length,
    unplaced,
    upward,
    roomEdges: [...roomEdges.values()],
    circles: circles(roomGraph(edges)),
    runtimeCircles: circles(roomGraph(edges.filter((e) => !e.typeOnly))),
    startServerLines: startServerLines(src),
    byteRoutes: routes.map((r) => ({ ...r, src: inSrc.get(r.name), tests: inTests.get(r.name) })),
  };
}

/** The upward edges against the allowed list: those it lacks, and those it lists that are gone. */
export function againstAllowed(upward, allowed) {
  const present = new Set(upward.map(edgeKey));
  const listed = new Set(allowed);
  return { added: [...present].filter((k) => !listed.has(k)), gone: [...listed].filter((k) => !present.has(k)) };
}

function report(result, check, { verbose, allowedFile }) {
  const out = [];
  const typeOnly = result.upward.filter((e) => e.typeOnly).length;
  out.push(`layers of apps/api/src (${result.files} files, ${result.edges} imports between them; the order is ROOMS in scripts/layers.mjs)`);
  out.push(
    `upward imports: ${result.upward.length} file edges (${typeOnly} of them type-only, which count), ${result.roomEdges.length} room edges (${result.roomEdges.filter((e) => e.typeOnly).length} type-only); the target: at most 10, each justified in its file`,
  );
  for (const e of result.roomEdges) {
    out.push(`  ${e.from} -> ${e.to}: ${e.files} file${e.files === 1 ? '' : 's'}${e.typeOnly ? ', type-only' : ''}`);
    if (verbose) for (const f of result.upward.filter((u) => roomOf(u.from) === e.from && roomOf(u.to) === e.to)) out.push(`    ${edgeKey(f)}`);
  }
  out.push(`import circles across rooms: ${result.circles.length} (${result.runtimeCircles.length} without the type-only imports); the target: 0`);
  for (const c of result.circles) out.push(`  ${c.join(', ')}`);
  if (verbose) for (const c of result.runtimeCircles) out.push(`  without the type-only imports: ${c.join(', ')}`);
  out.push(`startServer (server.ts): ${result.startServerLines ?? 'not found'} lines; the target: at most 80`);
  out.push('byte routes, and the files whose code names each (its constant or its path); the target: 1 in src, its module:');
  for (const r of result.byteRoutes) {
    out.push(`  ${r.method} ${r.path} (${r.name}): ${r.src.length} in src (${r.src.join(', ')}), ${r.tests.length} in the tests`);
    if (verbose) out.push(`    tests: ${r.tests.join(', ')}`);
  }
  for (const room of result.unplaced) out.push(`error: the room ${room} has no place in ROOMS (scripts/layers.mjs): give it a rank and a reason`);
  for (const k of check.added) out.push(`error: a new upward import, against the layer order: ${k}`);
  if (check.gone.length > 0) {
    out.push(`error: ${check.gone.length} upward import(s) in ${allowedFile} are gone: \`node scripts/layers.mjs --prune\` drops them from the list`);
    for (const k of check.gone) out.push(`  ${k}`);
  }
  return out.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const at = args.indexOf(name);
    return at === -1 ? fallback : path.resolve(args[at + 1]);
  };
  const src = option('--src', path.join(ROOT, 'apps/api/src'));
  const tests = option('--tests', path.join(src, '..', 'test'));
  const allowedFile = option('--allowed', path.join(ROOT, 'lint/layers-allowed.json'));
  const result = analyse({ src, tests });
  const allowed = existsSync(allowedFile) ? JSON.parse(readFileSync(allowedFile, 'utf8')).upward : [];
  let check = againstAllowed(result.upward, allowed);
  if (args.includes('--prune') && check.gone.length > 0) {
    const kept = allowed.filter((k) => !check.gone.includes(k));
    const previous = JSON.parse(readFileSync(allowedFile, 'utf8'));
    writeFileSync(allowedFile, `${JSON.stringify({ ...previous, upward: kept }, null, 2)}\n`);
    console.error(`${path.relative(process.cwd(), allowedFile)}: dropped ${check.gone.length} gone upward import(s)`);
    check = { ...check, gone: [] };
  }
  if (args.includes('--json')) console.log(JSON.stringify({ ...result, ...check }, null, 2));
  else console.log(report(result, check, { verbose: args.includes('--verbose'), allowedFile: path.relative(process.cwd(), allowedFile) }));
  if (result.unplaced.length > 0 || check.added.length > 0 || check.gone.length > 0) process.exitCode = 1;
}

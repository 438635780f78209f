// The documentation tree: every relative link in the repository root's Markdown files (README.md,
// CONTRIBUTING.md, CHANGELOG.md), docs/**/*.md and bench/README.md resolves (the file exists and,
// for a #fragment, the target has that heading, as GitHub slugs it),
// and docs/spec/ holds what the specs beside the repository hold (../shared/spec/, copied by
// `pnpm spec:copy`), or, without them, what docs/spec/SHA256SUMS recorded at copy time.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { toString as mdastText } from 'mdast-util-to-string';
import { visit } from 'unist-util-visit';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const specCopies = path.join(root, 'docs', 'spec');
const specSource = path.resolve(root, '../shared/spec');

/** The root's .md files, bench/README.md and every .md file under docs/, as paths relative to the root. */
function markdownFiles(): string[] {
  const files = readdirSync(root).filter((name) => name.endsWith('.md') && statSync(path.join(root, name)).isFile());
  files.push('bench/README.md');
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) files.push(rel);
    }
  };
  walk('docs');
  return files;
}

interface Parsed {
  /** The anchors GitHub gives the page's headings (github-slugger, duplicates numbered). */
  anchors: Set<string>;
  /** Every link and link definition's URL, with its line. */
  links: { url: string; line: number }[];
}

function parse(markdown: string): Parsed {
  const tree = fromMarkdown(markdown);
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const links: Parsed['links'] = [];
  visit(tree, (node) => {
    if (node.type === 'heading') anchors.add(slugger.slug(mdastText(node)));
    if (node.type === 'link' || node.type === 'definition' || node.type === 'image') links.push({ url: node.url, line: node.position?.start.line ?? 0 });
  });
  return { anchors, links };
}

const parsedFiles = new Map<string, Parsed>();
function parsedFile(absolute: string): Parsed {
  let parsed = parsedFiles.get(absolute);
  if (!parsed) {
    parsed = parse(readFileSync(absolute, 'utf8'));
    parsedFiles.set(absolute, parsed);
  }
  return parsed;
}

/** What is wrong with a relative link from `file` (relative to the root), or undefined. */
function brokenLink(file: string, url: string): string | undefined {
  const hash = url.indexOf('#');
  const target = decodeURI(hash < 0 ? url : url.slice(0, hash));
  const fragment = hash < 0 ? undefined : decodeURIComponent(url.slice(hash + 1));
  let absolute = target === '' ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), target);
  if (!absolute.startsWith(root)) return 'points outside the repository';
  if (!existsSync(absolute)) return 'no such file';
  if (statSync(absolute).isDirectory()) {
    // GitHub shows a folder's README.md; a fragment then names one of its headings.
    if (fragment === undefined) return undefined;
    absolute = path.join(absolute, 'README.md');
    if (!existsSync(absolute)) return 'a #fragment on a folder without README.md';
  }
  if (fragment === undefined) return undefined;
  if (!absolute.endsWith('.md')) return 'a #fragment on a file that is not Markdown';
  return parsedFile(absolute).anchors.has(fragment) ? undefined : `no heading #${fragment} in ${path.relative(root, absolute)}`;
}

/** A URL with a scheme (https:, mailto:) or protocol-relative: not a file of the repository. */
const external = (url: string) => /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//');

describe('the link check', () => {
  it('slugs headings as GitHub does, and finds what is broken', () => {
    const page = parse(
      [
        '# The `switchyard` CLI',
        '## The OpenAPI document and `/docs`',
        '### Administration operations (admin-api.md)',
        '## Raw SQL, typed at the boundary',
        '## Notes',
        '## Notes',
        'See [the CLI](#the-switchyard-cli) and [notes](#notes-1), [a page](other.md#x) and [a site](https://example.com).',
        '',
        '[ref]: spec/compat.md',
      ].join('\n'),
    );
    expect([...page.anchors]).toEqual([
      'the-switchyard-cli',
      'the-openapi-document-and-docs',
      'administration-operations-admin-apimd',
      'raw-sql-typed-at-the-boundary',
      'notes',
      'notes-1',
    ]);
    expect(page.links.map((link) => link.url)).toEqual(['#the-switchyard-cli', '#notes-1', 'other.md#x', 'https://example.com', 'spec/compat.md']);

    expect(brokenLink('docs/api.md', 'spec/compat.md')).toBeUndefined();
    expect(brokenLink('docs/api.md', '#two-planes')).toBeUndefined();
    expect(brokenLink('docs/api.md', 'nowhere.md')).toBe('no such file');
    expect(brokenLink('docs/api.md', '#no-such-heading')).toBe('no heading #no-such-heading in docs/api.md');
    expect(brokenLink('README.md', 'docs/operations.md#memory')).toBeUndefined();
    expect(brokenLink('README.md', '../outside.md')).toBe('points outside the repository');
  });
});

describe('the documentation tree', () => {
  const files = markdownFiles();

  it('has the README, CONTRIBUTING and CHANGELOG, the docs index and the pages the README links to', () => {
    for (const page of [
      'README.md',
      'CONTRIBUTING.md',
      'CHANGELOG.md',
      'docs/README.md',
      'docs/api.md',
      'docs/decisions/README.md',
      'docs/spec/README.md',
      'bench/README.md',
    ]) {
      expect(files, page).toContain(page);
    }
    const readmeLinks = parsedFile(path.join(root, 'README.md')).links.filter((link) => !external(link.url));
    expect(readmeLinks.length).toBeGreaterThan(20);
  });

  it("every relative link in the root's Markdown files, docs/ and bench/README.md resolves, #fragments included", () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const { url, line } of parsedFile(path.join(root, file)).links) {
        if (external(url)) continue;
        const problem = brokenLink(file, url);
        if (problem) broken.push(`${file}:${line}: ${url}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names no section of the README in prose ("the README\'s X section") that the README lacks: a link is checked, a name is not', () => {
    const readme = parsedFile(path.join(root, 'README.md')).anchors;
    const named: string[] = [];
    for (const file of files) {
      const text = readFileSync(path.join(root, file), 'utf8');
      for (const match of text.matchAll(/README(?:\.md)?'s\s+"?([A-Z][\w ]*?)"?\s+section/g)) {
        if (!readme.has(new GithubSlugger().slug(match[1]!))) named.push(`${file}: ${match[0]}`);
      }
    }
    expect(named).toEqual([]);
  });
});

describe('the README', () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  it('says how to change the port, and its commands follow PORT rather than fixing 8080', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Try it'));
    expect(quickStart).toContain('`PORT=9090 pnpm start`');
    const blocks = [...readme.matchAll(/```(?:sh|ts)\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const fixed = blocks.flatMap((block) => block.split('\n')).filter((line) => /127\.0\.0\.1:8080/.test(line) && !line.trimStart().startsWith('#'));
    expect(fixed).toEqual([]);
  });
});

describe('docs/spec', () => {
  const copies = () =>
    readdirSync(specCopies)
      .filter((name) => name.endsWith('.md') && name !== 'README.md')
      .sort();
  const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

  it('holds the checksums recorded at copy time (SHA256SUMS), one per copy', () => {
    const recorded = readFileSync(path.join(specCopies, 'SHA256SUMS'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => {
        const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
        if (!match) throw new Error(`docs/spec/SHA256SUMS: not "<sha256>  <name>": ${line}`);
        return { sha256: match[1]!, name: match[2]! };
      });
    expect(recorded.map((entry) => entry.name).sort()).toEqual(copies());
    expect(copies()).toEqual(expect.arrayContaining(['admin-api.md', 'compat.md', 'management-api.md']));
    for (const { sha256: expected, name } of recorded) {
      expect(sha256(path.join(specCopies, name)), `docs/spec/${name} differs from SHA256SUMS: copy it again (pnpm spec:copy)`).toBe(expected);
    }
  });

  const besideSpecs = existsSync(specSource);
  it.runIf(besideSpecs)(
    `is a copy of ../shared/spec beside the repository (pnpm spec:copy)${besideSpecs ? '' : ` (skipped: no ${specSource}; SHA256SUMS is checked instead)`}`,
    () => {
      const sources = readdirSync(specSource)
        .filter((name) => name.endsWith('.md'))
        .sort();
      expect(copies(), 'docs/spec/ and ../shared/spec/ hold different files: run pnpm spec:copy').toEqual(sources);
      for (const name of sources) {
        expect(sha256(path.join(specCopies, name)), `docs/spec/${name} differs from ../shared/spec/${name}: run pnpm spec:copy`).toBe(
          sha256(path.join(specSource, name)),
        );
      }
    },
  );
});

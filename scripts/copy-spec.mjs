// `pnpm spec:copy`: copies the specs this project is built to (../shared/spec/*.md, beside the
// repository, or the folder given as the first argument) into docs/spec/, writes their SHA-256 sums
// to docs/spec/SHA256SUMS (`sha256sum -c SHA256SUMS` reads it) and docs/spec/README.md, the folder's
// index. apps/api/test/project/docs-tree.test.ts compares docs/spec/ with the source when it exists beside
// the repository, and otherwise checks the copies against SHA256SUMS.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = path.resolve(root, process.argv[2] ?? '../shared/spec');
const target = path.join(root, 'docs', 'spec');

/** The specs, in the order of precedence: where they disagree, the first one wins. */
const ROLES = {
  'management-api.md': 'the contract: the 21 operations of the management and catalog API; it wins over the others',
  'compat.md': 'compatibility notes: what existing clients expect where the contract leaves it open',
  'admin-api.md': 'administration, catalog and account operations in the form existing clients call them (A, B and C series)',
  'platform-api.md': 'catalog and content, identity, observability destinations (the D series)',
};

if (!existsSync(source)) {
  console.error(`copy-spec: no folder ${source} (the specs sit in ../shared/spec beside the repository)`);
  process.exit(1);
}
const files = readdirSync(source)
  .filter((name) => name.endsWith('.md'))
  .sort();
if (files.length === 0) throw new Error(`copy-spec: ${source} holds no .md file`);
if (files.includes('README.md')) throw new Error('copy-spec: the source holds a README.md, which would replace the index this script writes');

mkdirSync(target, { recursive: true });
for (const name of readdirSync(target)) {
  if (name.endsWith('.md') && name !== 'README.md' && !files.includes(name)) rmSync(path.join(target, name));
}
const sums = files.map((name) => {
  copyFileSync(path.join(source, name), path.join(target, name));
  const sha256 = createHash('sha256')
    .update(readFileSync(path.join(target, name)))
    .digest('hex');
  return `${sha256}  ${name}\n`;
});
writeFileSync(path.join(target, 'SHA256SUMS'), sums.join(''));

const listed = [...Object.keys(ROLES).filter((name) => files.includes(name)), ...files.filter((name) => !(name in ROLES))];
const index = `# The specs

Copies of the specs Switchyard is built to, made by \`pnpm spec:copy\` (\`scripts/copy-spec.mjs\`) from
\`../shared/spec/\` beside the repository. Do not edit them here: change the source, then copy again.
\`SHA256SUMS\` holds their checksums at copy time; \`apps/api/test/project/docs-tree.test.ts\` compares the
copies with the source when it is there, and with \`SHA256SUMS\` otherwise.

${listed.map((name) => `- [\`${name}\`](${name})${ROLES[name] ? `: ${ROLES[name]}` : ''}`).join('\n')}

How the server follows them: [The API](../api.md).
`;
writeFileSync(path.join(target, 'README.md'), index);
console.log(`copy-spec: ${files.length} files from ${path.relative(root, source) || '.'} into docs/spec (SHA256SUMS written)`);

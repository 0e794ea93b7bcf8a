import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The anchors of docs/architecture.md's "One request, file by file": every `file:function` names a
 * file that exists and declares that function (a function declaration, a method, or a variable or
 * property holding a function), so the walk through the request path cannot rot.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`## ${title}\n`);
  assert.ok(start >= 0, `docs/architecture.md has a section "${title}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** `path:function` anchors; a bare `file.ts:function` is in the folder of the anchor before it. */
function anchorsOf(text: string): Array<{ file: string; name: string }> {
  const anchors: Array<{ file: string; name: string }> = [];
  let folder = '';
  for (const [, path, name] of text.matchAll(/`([\w./-]+\.ts):(\w+)`/g)) {
    const file = path?.includes('/') ? (path as string) : join(folder, path as string);
    folder = dirname(file);
    anchors.push({ file, name: name as string });
  }
  return anchors;
}

function isFunction(node: ts.Node | undefined): boolean {
  return node !== undefined && (ts.isArrowFunction(node) || ts.isFunctionExpression(node));
}

/** The names of the functions a file declares, at any depth. */
function declaredFunctions(file: string): Set<string> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const names = new Set<string>();
  const visit = (node: ts.Node) => {
    if ((ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node)) && node.name)
      names.add(node.name.text);
    if (ts.isMethodDeclaration(node) && ts.isIdentifier(node.name)) names.add(node.name.text);
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && isFunction(node.initializer))
      names.add(node.name.text);
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && isFunction(node.initializer))
      names.add(node.name.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

describe('docs/architecture.md: one request, file by file', () => {
  const anchors = anchorsOf(section(doc, 'One request, file by file'));

  it('names the path from the route to the registry and back to the outbox', () => {
    const files = new Set(anchors.map((a) => a.file));
    for (const file of [
      'src/modules/validation/routes.ts',
      'src/modules/validation/service.ts',
      'src/modules/validation/live.ts',
      'src/modules/validation/guarded-call.ts',
      'src/modules/validation/fallback.ts',
      'src/modules/outbox/service.ts',
    ]) {
      assert.ok(files.has(file), `an anchor in ${file}`);
    }
  });

  it('every anchor is a file that declares that function', () => {
    const missing = anchors.filter(({ file, name }) => {
      const path = join(ROOT, file);
      return !existsSync(path) || !declaredFunctions(path).has(name);
    });
    assert.deepEqual(
      missing.map((a) => `${a.file}:${a.name}`),
      [],
    );
  });

  it('tells a missing function from a declared one (a check that passes everything would not)', () => {
    const live = join(ROOT, 'src/modules/validation/live.ts');
    assert.ok(declaredFunctions(live).has('answer'));
    assert.equal(declaredFunctions(live).has('noSuchStep'), false);
  });
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The import rules of docs/architecture.md, checked on every file of src/: each layer imports only
 * what its paragraph there says it may.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Every relative import of a file (static, type-only, `export … from` and dynamic), as paths under
 * src/, read by the TypeScript compiler's own pre-processor: an import-shaped line in a comment or a
 * template string is not an import.
 */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(SRC, resolve(dirname(file), s)).replace(/\.js$/, '.ts'));
}

const graph = sourceFiles(SRC).map((file) => ({ file: relative(SRC, file), imports: importsOf(file) }));

function violations(from: RegExp, forbidden: (target: string, file: string) => boolean): string[] {
  return graph.flatMap(({ file, imports }) =>
    from.test(file) ? imports.filter((target) => forbidden(target, file)).map((t) => `${file} → ${t}`) : [],
  );
}

describe('the import rules of docs/architecture.md', () => {
  it('reads the import graph (a rule that checks nothing would pass)', () => {
    assert.ok(graph.length > 100, 'every source file is read');
    assert.ok(
      graph.some(
        ({ file, imports }) =>
          file === 'container/wiring.ts' && imports.includes('modules/outbox/service.ts'),
      ),
      'imports are resolved to paths under src/',
    );
  });

  it('src/lib/ is a leaf: it imports only src/lib/', () => {
    assert.deepEqual(
      violations(/^lib\//, (target) => !target.startsWith('lib/')),
      [],
    );
  });

  it('src/http/ imports no feature module, no database and no registry', () => {
    assert.deepEqual(
      violations(/^http\//, (target) => /^(modules|db|registries)\//.test(target)),
      [],
    );
  });

  it('src/db/ and src/registries/ import no feature module and no HTTP', () => {
    assert.deepEqual(
      violations(/^(db|registries)\//, (target) => /^(modules|http)\//.test(target)),
      [],
    );
  });

  it('a module imports another module only through its index.ts', () => {
    assert.deepEqual(
      violations(/^modules\//, (target, file) => {
        const [, own] = file.split('/');
        const parts = target.split('/');
        return parts[0] === 'modules' && parts[1] !== own && parts.slice(2).join('/') !== 'index.ts';
      }),
      [],
    );
  });

  it("only route code imports src/http/ (where the HTTP errors and their statuses are): route files (routes.ts, *-routes.ts), their schema modules, module registrations (module.ts), the request hooks that check keys (keys: auth, auth-failures, key-limit, quota; admin: auth) and the outbox's response recorder", () => {
    const hooks = new Set([
      'modules/keys/auth.ts',
      'modules/keys/auth-failures.ts',
      'modules/keys/key-limit.ts',
      'modules/keys/quota.ts',
      'modules/admin/auth.ts',
    ]);
    assert.ok(
      graph.some(({ file, imports }) => hooks.has(file) && imports.includes('http/api-error.ts')),
      'the hooks are seen importing the HTTP errors',
    );
    assert.deepEqual(
      violations(
        /^modules\//,
        (target, file) =>
          target.startsWith('http/') &&
          !/[/-](routes|schemas)\.ts$/.test(file) &&
          !file.endsWith('/module.ts') &&
          !hooks.has(file) &&
          file !== 'modules/outbox/reply.ts',
      ),
      [],
    );
  });

  it('no file outside src/http/ and route code names an HTTP error: src/lib/, src/db/, src/registries/, src/jobs/ and src/config import none', () => {
    assert.deepEqual(
      violations(/^(lib|db|registries|jobs|config)(\.ts$|\/)/, (target) => target.startsWith('http/')),
      [],
    );
  });

  it('the configuration (src/config.ts, src/config/) imports only itself and src/lib/', () => {
    assert.ok(
      graph.some(({ file }) => file.startsWith('config/')),
      'the configuration is read',
    );
    assert.deepEqual(
      violations(/^config(\.ts$|\/)/, (target) => !/^(config(\.ts$|\/)|lib\/)/.test(target)),
      [],
    );
  });

  it('src/jobs/ imports only src/db/, src/lib/ and itself', () => {
    assert.ok(
      graph.some(({ file }) => file.startsWith('jobs/')),
      'the worker loop is read',
    );
    assert.deepEqual(
      violations(/^jobs\//, (target) => !/^(jobs|db|lib)\//.test(target)),
      [],
    );
  });

  it('nothing imports the composition (src/container, src/app) but the entry points (src/cli/, src/main.ts) and the composition itself', () => {
    const composition = /^(container|app)(\.ts$|\/)/;
    assert.ok(
      graph.some(({ file, imports }) => file === 'main.ts' && imports.some((t) => composition.test(t))),
      'the entry points are seen importing it',
    );
    assert.deepEqual(
      violations(/^(?!cli\/|main\.ts$|container(\.ts$|\/)|app(\.ts$|\/))/, (target) =>
        composition.test(target),
      ),
      [],
    );
  });

  it('the simulators are used by the CLI only', () => {
    assert.deepEqual(
      violations(/^(?!cli\/|simulators\/)/, (target) => target.startsWith('simulators/')),
      [],
    );
  });
});

describe('module registrations', () => {
  const withRoutes = [
    ...new Set(
      graph
        .map(({ file }) => /^modules\/([^/]+)\/(?:[^/]+-)?routes\.ts$/.exec(file)?.[1])
        .filter((name): name is string => name !== undefined),
    ),
  ];
  it('every module with routes has one registration (module.ts), and the list in src/app/modules.ts holds it', async () => {
    const { MODULES } = await import('../../src/app/modules.js');
    assert.ok(withRoutes.length > 10, 'the modules with routes are found');
    assert.deepEqual(
      withRoutes.filter((name) => !MODULES.some((module) => module.name === name)),
      [],
    );
    assert.deepEqual(
      MODULES.map((module) => module.name).filter(
        (name) => !graph.some(({ file }) => file === `modules/${name}/module.ts`),
      ),
      [],
      'a registration is named after its module folder',
    );
  });

  it('buildApp registers no module route itself: it walks the list', () => {
    const fromModules = [
      ...readFileSync(join(SRC, 'app.ts'), 'utf8').matchAll(/import\s*\{([^}]*)\}\s*from\s*'\.\/modules\//g),
    ].flatMap((m) => (m[1] ?? '').split(',').map((name) => name.trim()));
    assert.ok(fromModules.length > 0, 'the imports of app.ts are read');
    assert.deepEqual(
      fromModules.filter((name) => /Routes$|^register/.test(name)),
      [],
    );
  });
});

describe('route handlers', () => {
  it('take query, body, params and headers typed from their schemas: no route file casts them', () => {
    const casts = graph
      .filter(({ file }) => file.endsWith('routes.ts'))
      .flatMap(({ file }) =>
        [
          ...readFileSync(join(SRC, file), 'utf8').matchAll(/request\.(query|body|params|headers)\s+as\b/g),
        ].map((m) => `${file}: request.${m[1]} as`),
      );
    assert.deepEqual(casts, []);
  });
});

/**
 * The circles of a graph: its strongly connected components of more than one file, or of one file
 * importing itself (Tarjan's algorithm), each sorted, in the order they are found.
 */
function circles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  function visit(node: string): void {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (edges.get(node) ?? []).includes(node)) found.push(component.sort());
  }
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('the import graph', () => {
  it('finds a circle where there is one (a check that finds none would pass)', () => {
    const edges = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    assert.deepEqual(circles(edges), [['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
  });

  it('has no circle: no file of src/ reaches itself through its imports, type-only imports included', () => {
    const edges = new Map(graph.map(({ file, imports }) => [file, imports]));
    assert.ok(
      graph.some(({ imports }) => imports.some((target) => edges.has(target))),
      'the imports name files of the graph',
    );
    assert.deepEqual(circles(edges), []);
  });
});

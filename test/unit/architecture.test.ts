import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

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

/** Every relative import of a file (static, `export … from` and dynamic), as paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:import|export)\s[^'";]*?from\s+'([^']+)'/g),
    ...text.matchAll(/import\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1] ?? '');
  return specifiers
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
        ({ file, imports }) => file === 'container.ts' && imports.includes('modules/outbox/service.ts'),
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

  it("only route files (routes.ts, *-routes.ts), their schema modules, module registrations (module.ts) and the outbox's response recorder import src/http/", () => {
    assert.deepEqual(
      violations(
        /^modules\//,
        (target, file) =>
          target.startsWith('http/') &&
          !/[/-](routes|schemas)\.ts$/.test(file) &&
          !file.endsWith('/module.ts') &&
          file !== 'modules/outbox/reply.ts',
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

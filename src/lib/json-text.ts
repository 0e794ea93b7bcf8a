/**
 * Text a request body may not carry, because it cannot be stored as given: the NUL character
 * (PostgreSQL's text refuses it; SQLite would keep it) and lone UTF-16 surrogates (UTF-8 has no
 * encoding for them, so a database would store a replacement character instead). Both can only
 * reach a parsed JSON body through `\u` escapes, so `text` (the raw body) is searched for those
 * first and the parsed value is walked only when one is there.
 */
export function unstorableText(text: string, value: unknown): 'nul' | 'lone_surrogate' | null {
  const nul = text.includes('\\u0000');
  const surrogate = SURROGATE_ESCAPE.test(text);
  if (!nul && !surrogate) return null;
  return find(value, nul, surrogate);
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function check(s: string, nul: boolean, surrogate: boolean): 'nul' | 'lone_surrogate' | null {
  if (nul && s.includes('\u0000')) return 'nul';
  if (surrogate && LONE_SURROGATE.test(s)) return 'lone_surrogate';
  return null;
}

function find(value: unknown, nul: boolean, surrogate: boolean): 'nul' | 'lone_surrogate' | null {
  if (typeof value === 'string') return check(value, nul, surrogate);
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = find(item, nul, surrogate);
      if (found) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    const found = check(key, nul, surrogate) ?? find(item, nul, surrogate);
    if (found) return found;
  }
  return null;
}

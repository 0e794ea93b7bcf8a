/** A count with its noun, singular or plural as the count asks: `1 row`, `0 rows`, `1,200 rows`. */
export function counted(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

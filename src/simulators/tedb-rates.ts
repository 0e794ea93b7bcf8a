/** The TEDB simulator's data: the member states' rows as TEDB reports them, with their quirks. */
export interface SimRow {
  /** TEDB's member-state code (`EL` for Greece). */
  state: string;
  type: 'STANDARD' | 'REDUCED';
  rateType: string;
  value: number | null;
  from: string;
  /** Last day, or null while in force. */
  to: string | null;
  category?: { identifier: string; description: string };
  comment?: string;
}

export type Kind = 'standard' | 'reduced' | 'super_reduced' | 'parking';

/** Rows a rate of a kind produces. */
export function rowsOf(
  state: string,
  kind: Kind,
  values: number[],
  from: string,
  to: string | null = null,
): SimRow[] {
  return values.map((value) => ({
    state,
    type: kind === 'standard' ? 'STANDARD' : 'REDUCED',
    rateType:
      kind === 'standard'
        ? 'DEFAULT'
        : kind === 'reduced'
          ? 'REDUCED_RATE'
          : kind === 'super_reduced'
            ? 'SUPER_REDUCED_RATE'
            : 'PARKING_RATE',
    value,
    from,
    to,
  }));
}

const region = (description: string) => ({ identifier: 'REGION', description });

/** The member states' rows as TEDB reports them (late 2026), with their quirks. */
export function initialRows(): SimRow[] {
  const rows: SimRow[] = [];
  const add = (
    state: string,
    from: string,
    standard: number,
    reduced: number[],
    extra: { superReduced?: number[]; parking?: number[]; reducedFrom?: string } = {},
  ) => {
    rows.push(...rowsOf(state, 'standard', [standard], from));
    rows.push(...rowsOf(state, 'reduced', reduced, extra.reducedFrom ?? from));
    if (extra.superReduced) rows.push(...rowsOf(state, 'super_reduced', extra.superReduced, from));
    if (extra.parking) rows.push(...rowsOf(state, 'parking', extra.parking, from));
  };
  add('AT', '2016-01-01', 20, [10, 13], { parking: [13] });
  rows.push(...rowsOf('AT', 'super_reduced', [4.9], '2026-07-01'));
  rows.push({
    ...rowsOf('AT', 'reduced', [19], '2016-01-01')[0]!,
    category: region('Regional rate'),
    comment: 'Jungholz, Mittelberg',
  });
  add('BE', '1996-01-01', 21, [6, 12], { parking: [12] });
  add('BG', '2007-01-01', 20, [9]);
  add('CY', '2014-01-13', 19, [5, 9]);
  add('CZ', '2024-01-01', 21, [12]);
  add('DE', '2021-01-01', 19, [7]);
  add('DK', '1992-01-01', 25, []);
  rows.push({
    state: 'DK',
    type: 'REDUCED',
    rateType: 'EXEMPTED',
    value: 0,
    from: '1992-01-01',
    to: null,
    category: { identifier: 'NEWSPAPERS', description: 'Newspapers' },
  });
  add('EE', '2025-07-01', 24, [9, 13]);
  add('ES', '2012-09-01', 21, [10], { superReduced: [4] });
  rows.push({
    ...rowsOf('ES', 'standard', [7], '2020-01-01')[0]!,
    comment: 'VAT - Canary Islands',
  });
  add('FI', '2026-01-01', 25.5, [10, 13.5]);
  add('FR', '2014-01-01', 20, [5.5, 10], { superReduced: [2.1] });
  for (const value of [2.1, 5.5, 10]) {
    rows.push({
      ...rowsOf('FR', value < 5 ? 'super_reduced' : 'reduced', [value], '2014-01-01')[0]!,
      category: { identifier: 'PHARMACEUTICAL_PRODUCTS', description: 'Pharmaceutical products' },
    });
  }
  rows.push(...rowsOf('EL', 'standard', [24], '2016-06-01'));
  rows.push(...rowsOf('EL', 'reduced', [6], '2016-06-01'));
  rows.push(...rowsOf('EL', 'super_reduced', [13], '2016-06-01'));
  for (const value of [4, 9, 17]) {
    rows.push({
      ...rowsOf('EL', value === 4 ? 'super_reduced' : 'reduced', [value], '2024-01-01')[0]!,
      category: region('Leros, Lesbos, Kos, Samos and Chios'),
    });
  }
  rows.push({
    state: 'EL',
    type: 'REDUCED',
    rateType: 'OUT_OF_SCOPE',
    value: 0,
    from: '2016-06-01',
    to: null,
    category: { identifier: 'MOUNT_ATHOS', description: 'Mount Athos' },
  });
  add('HR', '2013-01-01', 25, [5, 13]);
  add('HU', '2012-01-01', 27, [5, 18]);
  add('IE', '2021-03-01', 23, [9, 13.5], { superReduced: [4.8], parking: [13.5] });
  add('IT', '2013-10-01', 22, [5, 10], { superReduced: [4] });
  // A zero rate labelled as a band: Italy's super-reduced 0.0 row in the recorded answers.
  rows.push(...rowsOf('IT', 'super_reduced', [0], '2013-10-01'));
  add('LT', '2026-01-01', 21, [5, 12]);
  add('LU', '2024-01-01', 17, [8], { superReduced: [3], parking: [14] });
  add('LV', '2011-01-01', 21, [5, 12]);
  add('MT', '2024-01-01', 18, [5, 7, 12]);
  add('NL', '2019-01-01', 21, [9]);
  rows.push(...rowsOf('PL', 'standard', [23], '2011-01-01'));
  rows.push(...rowsOf('PL', 'reduced', [5], '2011-01-01'));
  rows.push(...rowsOf('PL', 'super_reduced', [8], '2011-01-01'));
  rows.push(...rowsOf('PT', 'standard', [23], '2011-01-01'));
  rows.push(...rowsOf('PT', 'reduced', [13], '2011-01-01'));
  rows.push(...rowsOf('PT', 'super_reduced', [6], '2011-01-01'));
  rows.push(...rowsOf('PT', 'parking', [13], '2011-01-01'));
  rows.push({ ...rowsOf('PT', 'reduced', [22], '2011-01-01')[0]!, category: region('Madeira') });
  add('RO', '2025-08-01', 21, [11]);
  add('SE', '1995-01-01', 25, [6, 12]);
  add('SI', '2013-07-01', 22, [5, 9.5]);
  add('SK', '2025-01-01', 23, [5, 19]);
  rows.push({
    state: 'SK',
    type: 'REDUCED',
    rateType: 'NOT_APPLICABLE',
    value: 0,
    from: '2025-01-01',
    to: null,
    category: { identifier: 'CHILDREN_CAR_SEATS', description: "Children's car seats" },
  });
  return rows;
}

/**
 * Legal forms as data: each canonical token with the ways it is written (abbreviations and full
 * names, in the languages of the countries that use it). A name's legal form is read at its end or
 * at its start (French registries write `SA DANONE`, Swedish ones `AB VOLVO`), compared by its
 * canonical token, and left out of the comparison of the rest of the name.
 *
 * Source: the forms and their local abbreviations follow the ISO 20275 Entity Legal Forms code list
 * (GLEIF, "ELF code list"), restricted to the EU member states, Northern Ireland and the forms
 * customers commonly type. Spelling variants (dots, spaces, `&`/`und`) need no entry of their own:
 * a form is matched on its folded letters without spaces (`S.à r.l.`, `SARL` and `s a r l` are all
 * `sarl`).
 */
import { fold, looseKey } from './text.js';

export interface LegalForm {
  /** The canonical token, e.g. `gmbh`. */
  form: string;
  /** How it is written: abbreviations and full names. */
  names: readonly string[];
}

export const LEGAL_FORMS: readonly LegalForm[] = [
  // Germany, Austria (and the German-speaking part of Switzerland and Belgium)
  {
    form: 'gmbh',
    names: ['GmbH', 'Gesellschaft mit beschränkter Haftung', 'Gesellschaft m.b.H.', 'Ges.m.b.H.', 'GesmbH'],
  },
  {
    form: 'gmbh & co kg',
    names: ['GmbH & Co. KG', 'GmbH und Co. KG', 'GmbH u. Co. KG', 'GmbH & Co KG'],
  },
  { form: 'ug', names: ['UG', 'UG (haftungsbeschränkt)', 'Unternehmergesellschaft (haftungsbeschränkt)'] },
  { form: 'ag', names: ['AG', 'Aktiengesellschaft'] },
  { form: 'kgaa', names: ['KGaA', 'Kommanditgesellschaft auf Aktien'] },
  { form: 'kg', names: ['KG', 'Kommanditgesellschaft'] },
  { form: 'ohg', names: ['OHG', 'oHG', 'offene Handelsgesellschaft'] },
  { form: 'gbr', names: ['GbR', 'Gesellschaft bürgerlichen Rechts'] },
  {
    form: 'ek',
    names: ['e.K.', 'e.Kfm.', 'e.Kfr.', 'eingetragener Kaufmann', 'eingetragene Kauffrau'],
  },
  { form: 'eg', names: ['eG', 'eingetragene Genossenschaft'] },
  { form: 'ev', names: ['e.V.', 'eingetragener Verein'] },
  { form: 'se', names: ['SE', 'Societas Europaea'] },
  // Ireland, Northern Ireland, Cyprus, Malta
  { form: 'ltd', names: ['Ltd', 'Ltd.', 'Limited', 'Λτδ', 'Λίμιτεδ'] },
  { form: 'plc', names: ['plc', 'p.l.c.', 'public limited company'] },
  { form: 'dac', names: ['DAC', 'designated activity company'] },
  { form: 'llp', names: ['LLP', 'limited liability partnership'] },
  // France, Belgium, Luxembourg
  {
    form: 'sa',
    names: [
      'SA',
      'S.A.',
      'société anonyme',
      'sociedad anónima',
      'sociedade anónima',
      'spółka akcyjna',
      'societate pe acțiuni',
    ],
  },
  {
    form: 'sas',
    names: ['SAS', 'S.A.S.', 'société par actions simplifiée', 'società in accomandita semplice'],
  },
  { form: 'sasu', names: ['SASU', 'société par actions simplifiée unipersonnelle'] },
  { form: 'sarl', names: ['SARL', 'S.à r.l.', 'S.à.r.l.', 'Sàrl', 'société à responsabilité limitée'] },
  { form: 'eurl', names: ['EURL', 'entreprise unipersonnelle à responsabilité limitée'] },
  { form: 'snc', names: ['SNC', 'S.N.C.', 'société en nom collectif', 'società in nome collettivo'] },
  { form: 'sprl', names: ['SPRL', 'société privée à responsabilité limitée'] },
  // Spain, Italy, Romania (SRL), Portugal
  {
    form: 'srl',
    names: [
      'SRL',
      'S.R.L.',
      'S.r.l.',
      'SL',
      'S.L.',
      'sociedad limitada',
      'sociedad de responsabilidad limitada',
      'società a responsabilità limitata',
      'societate cu răspundere limitată',
    ],
  },
  { form: 'slu', names: ['SLU', 'S.L.U.', 'sociedad limitada unipersonal'] },
  { form: 'srls', names: ['SRLS', 'S.r.l.s.', 'società a responsabilità limitata semplificata'] },
  { form: 'spa', names: ['SpA', 'S.p.A.', 'società per azioni'] },
  { form: 'lda', names: ['Lda', 'Lda.', 'Limitada', 'sociedade por quotas'] },
  {
    form: 'unipessoal lda',
    names: ['Unipessoal Lda', 'Unipessoal Limitada', 'sociedade unipessoal por quotas'],
  },
  // Netherlands, Belgium (Dutch)
  { form: 'bv', names: ['BV', 'B.V.', 'besloten vennootschap'] },
  { form: 'bvba', names: ['BVBA', 'besloten vennootschap met beperkte aansprakelijkheid'] },
  { form: 'nv', names: ['NV', 'N.V.', 'naamloze vennootschap'] },
  { form: 'vof', names: ['VOF', 'V.O.F.', 'vennootschap onder firma'] },
  { form: 'cv', names: ['CV', 'C.V.', 'commanditaire vennootschap'] },
  // Nordic and Baltic states
  {
    form: 'ab',
    names: ['AB', 'AB (publ)', 'Aktiebolag', 'Aktiebolaget', 'Ab', 'akcinė bendrovė'],
  },
  { form: 'hb', names: ['HB', 'handelsbolag'] },
  { form: 'kb', names: ['KB', 'kommanditbolag'] },
  { form: 'oy', names: ['Oy', 'Osakeyhtiö'] },
  { form: 'oyj', names: ['Oyj', 'julkinen osakeyhtiö', 'Abp'] },
  { form: 'ky', names: ['Ky', 'kommandiittiyhtiö'] },
  {
    form: 'as',
    names: [
      'A/S',
      'AS',
      'a.s.',
      'aktieselskab',
      'aksjeselskap',
      'aktsiaselts',
      'akciová společnost',
      'akciová spoločnosť',
      'akciju sabiedrība',
    ],
  },
  { form: 'asa', names: ['ASA', 'allmennaksjeselskap'] },
  { form: 'aps', names: ['ApS', 'anpartsselskab'] },
  { form: 'is', names: ['I/S', 'interessentskab'] },
  { form: 'ou', names: ['OÜ', 'osaühing'] },
  { form: 'sia', names: ['SIA', 'sabiedrība ar ierobežotu atbildību'] },
  { form: 'uab', names: ['UAB', 'uždaroji akcinė bendrovė'] },
  // Czechia, Slovakia
  {
    form: 'sro',
    names: ['s.r.o.', 'spol. s r.o.', 'společnost s ručením omezeným', 'spoločnosť s ručením obmedzeným'],
  },
  // Poland
  {
    form: 'sp z oo',
    names: ['sp. z o.o.', 'Sp. z o. o.', 'spółka z ograniczoną odpowiedzialnością'],
  },
  { form: 'spj', names: ['sp.j.', 'spółka jawna'] },
  { form: 'spk', names: ['sp.k.', 'spółka komandytowa'] },
  { form: 'ska', names: ['S.K.A.', 'spółka komandytowo-akcyjna'] },
  // Slovenia, Croatia
  {
    form: 'doo',
    names: ['d.o.o.', 'družba z omejeno odgovornostjo', 'društvo s ograničenom odgovornošću'],
  },
  { form: 'jdoo', names: ['j.d.o.o.', 'jednostavno društvo s ograničenom odgovornošću'] },
  { form: 'dd', names: ['d.d.', 'dioničko društvo', 'delniška družba'] },
  // Hungary
  { form: 'kft', names: ['Kft.', 'korlátolt felelősségű társaság'] },
  { form: 'zrt', names: ['Zrt.', 'zártkörűen működő részvénytársaság'] },
  { form: 'nyrt', names: ['Nyrt.', 'nyilvánosan működő részvénytársaság'] },
  { form: 'bt', names: ['Bt.', 'betéti társaság'] },
  // Romania
  { form: 'pfa', names: ['PFA', 'persoană fizică autorizată'] },
  // Greece
  { form: 'ae', names: ['Α.Ε.', 'ΑΕ', 'Ανώνυμη Εταιρεία', 'Ανώνυμη Εταιρία'] },
  { form: 'epe', names: ['Ε.Π.Ε.', 'Εταιρεία Περιορισμένης Ευθύνης'] },
  { form: 'ike', names: ['Ι.Κ.Ε.', 'Ιδιωτική Κεφαλαιουχική Εταιρεία'] },
  { form: 'oe', names: ['Ο.Ε.', 'Ομόρρυθμη Εταιρεία'] },
  { form: 'ee', names: ['Ε.Ε.', 'Ετερόρρυθμη Εταιρεία'] },
  // Bulgaria
  { form: 'ood', names: ['ООД', 'дружество с ограничена отговорност'] },
  { form: 'eood', names: ['ЕООД', 'еднолично дружество с ограничена отговорност'] },
  { form: 'ad', names: ['АД', 'акционерно дружество'] },
  { form: 'ead', names: ['ЕАД', 'еднолично акционерно дружество'] },
  { form: 'et', names: ['ЕТ', 'едноличен търговец'] },
];

/**
 * Forms that are one legal form written in two languages of one country: Belgium (BV = SRL,
 * NV = SA, BVBA = SPRL), Luxembourg and Switzerland (SARL = GmbH, SA = AG), Finland (Oy = Ab,
 * Oyj = Abp). Two names whose forms are in one group do not conflict.
 */
export const EQUIVALENT_FORMS: readonly (readonly string[])[] = [
  ['bv', 'srl'],
  ['nv', 'sa'],
  ['bvba', 'sprl'],
  ['sarl', 'gmbh'],
  ['sa', 'ag'],
  ['oy', 'ab'],
];

/**
 * Lookup keys: the form's letters without spaces; long forms also by their loose spelling
 * (`beschrankter` for `beschränkter`), short ones only as written, so that `A` is not read as the
 * Greek `Α.Ε.` (`ae`, loosely `a`).
 */
const LOOSE_FROM = 5;

function formKeys(folded: string): string[] {
  const compact = folded.replace(/ /g, '');
  return compact.length >= LOOSE_FROM ? [compact, looseKey(compact)] : [compact];
}

const BY_KEY: ReadonlyMap<string, string> = new Map(
  LEGAL_FORMS.flatMap(({ form, names }) =>
    [form, ...names].flatMap((name) => formKeys(fold(name)).map((key) => [key, form] as const)),
  ),
);

function formOf(words: readonly string[]): string | undefined {
  for (const key of formKeys(words.join(' '))) {
    const form = BY_KEY.get(key);
    if (form) return form;
  }
  return undefined;
}

/** The most words a form is written with (e.g. `societe par actions simplifiee unipersonnelle`). */
const LONGEST = Math.max(
  ...LEGAL_FORMS.flatMap(({ names }) => names.map((name) => fold(name).split(' ').length)),
);

export interface SplitName {
  /** The name's own words, without its legal form. */
  words: string[];
  /** The canonical legal form, or `null` when the name carries none. */
  form: string | null;
}

/** Splits a folded name into its own words and its legal form (read at its end, else at its start). */
export function splitLegalForm(all: readonly string[]): SplitName {
  for (let size = Math.min(LONGEST, all.length - 1); size >= 1; size--) {
    const form = formOf(all.slice(all.length - size));
    if (form) return { words: all.slice(0, all.length - size), form };
  }
  for (let size = Math.min(LONGEST, all.length - 1); size >= 1; size--) {
    const form = formOf(all.slice(0, size));
    if (form) return { words: all.slice(size), form };
  }
  return { words: [...all], form: null };
}

/** Whether two canonical forms are the same legal form. */
export function sameLegalForm(a: string, b: string): boolean {
  return a === b || EQUIVALENT_FORMS.some((group) => group.includes(a) && group.includes(b));
}

import type { KeyObject } from 'node:crypto';
import type { ConfirmationChainHeadTable, ConfirmationsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import { EVATR_STATUSES } from '../../registries/evatr.js';
import type { AuditsService } from '../audits/index.js';
import {
  type ConfirmationsService,
  hashRecord,
  publicKeyPem,
  toTaxauthCode,
  verifyHeadSignature,
} from '../confirmations/index.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import { chooseLanguage, formatTime, PROOF_TEXTS } from './texts.js';
import type { TimestampLookup } from './timestamps.js';
import type {
  LanguagePreference,
  MatchCode,
  ProofData,
  ProofLanguage,
  ProofOutcome,
  RegisterAnswer,
} from './types.js';

type Json = Record<string, unknown>;

/** The national register's answer an audited response carries (`meta.fallback`), if it is one. */
function registerAnswer(meta: Json): { answer: RegisterAnswer; consultation: string | null } | null {
  if (meta.source_status !== 'fallback') return null;
  const fallback = objectAt(meta.fallback);
  const identifiers: Record<string, string> = {};
  for (const [name, value] of Object.entries(objectAt(fallback.identifiers))) {
    if (typeof value === 'string') identifiers[name] = value;
  }
  const flags = Array.isArray(fallback.flags) ? fallback.flags.map(objectAt) : [];
  return {
    consultation: text(fallback.consultation_number),
    answer: {
      source_status: 'fallback',
      registration_scope: 'domestic',
      reason: text(fallback.reason),
      register_status: text(fallback.register_status),
      data_date: text(fallback.data_date),
      checked_at: text(fallback.checked_at),
      identifiers,
      flags: flags.map((flag) => ({
        code: text(flag.code) ?? '',
        since: text(flag.since),
        register_value: text(flag.register_value),
      })),
    },
  };
}

function parseObject(text: string | null | undefined): Json {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
  } catch {
    return {};
  }
}

const objectAt = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const flag = (value: unknown): boolean | null => (typeof value === 'boolean' ? value : null);
const match = (value: unknown): MatchCode | null =>
  value === 'A' || value === 'B' || value === 'C' || value === 'D' ? value : null;

/** The time in a UUID v7 (its first 48 bits, milliseconds since 1970), or null for another id. */
export function uuidV7Time(id: string): string | null {
  const hex = id.replaceAll('-', '');
  if (!/^[0-9a-f]{12}7[0-9a-f]{19}$/i.test(hex)) return null;
  return new Date(Number.parseInt(hex.slice(0, 12), 16)).toISOString();
}

/** The official German text of an eVatR status, or its English translation. */
function statusText(status: string, language: ProofLanguage): string | null {
  const info = Object.hasOwn(EVATR_STATUSES, status) ? EVATR_STATUSES[status] : undefined;
  if (!info) return null;
  return language === 'de' ? info.german : info.english;
}

type AuditRecord = Extract<Awaited<ReturnType<AuditsService['find']>>, { kind: 'ok' }>['audit'];

/** What an audit record's proof is made of: its stored response and request, read once. */
interface AuditEvidence {
  kind: 'ok';
  data: Json;
  meta: Json;
  register: ReturnType<typeof registerAnswer>;
  consultation: string | null;
  asked: Json;
  requester: string | null;
}

export function createProofsService(deps: {
  confirmations: Pick<ConfirmationsService, 'find'>;
  /** The current head of the evidence chain. */
  chainHead: () => Promise<ConfirmationChainHeadTable | undefined>;
  /** The evidence public key (of OPENVAT_EVIDENCE_KEY), to check the head's signature; null without one. */
  publicKey: KeyObject | null;
  audits: Pick<AuditsService, 'find'>;
  timestamps: TimestampLookup;
  clock: Clock;
}) {
  const { confirmations, chainHead, publicKey, audits, timestamps, clock } = deps;
  const publicPem = publicKey ? publicKeyPem(publicKey) : null;

  /** The proof of a confirmation of the caller's account and mode; not found as for the record itself. */
  async function confirmationProof(
    principal: ApiKeyPrincipal,
    id: string,
    preference: LanguagePreference,
  ): Promise<ProofOutcome> {
    const found = await confirmations.find(principal, id);
    if (found.kind === 'refused') return found;
    const row = found.confirmation;
    const seq = Number(row.seq);
    const [head, token] = await Promise.all([chainHead(), timestamps.newestCovering(seq)]);
    const language = chooseLanguage(preference, row.requester_vat_number);
    const data = objectAt(parseObject(row.response).data);
    const proof: ProofData = {
      kind: 'confirmation',
      id: row.id,
      request_id: row.request_id,
      mode: row.mode === 'live' ? 'live' : 'test',
      language,
      generated_at: clock.now().toISOString(),
      asked: {
        requester_vat_number: row.requester_vat_number,
        vat_number: row.vat_number,
        company: askedCompany(objectAt(parseObject(row.api_request).company)),
      },
      answer: confirmationAnswer(row, data, language),
      times: {
        received_at: uuidV7Time(row.request_id),
        answered_at: text(data.confirmed_at),
        stored_at: row.created_at,
        kept_until: row.retain_until,
      },
      record: { algorithm: 'sha256', hash: row.hash, hash_matches: hashRecord(row) === row.hash },
      chain: { seq, prev_hash: row.prev_hash },
      signed_head: signedHeadCovering(head, seq),
      timestamp: token,
      verification: PROOF_TEXTS[language].steps.confirmation(row.id, seq, token?.head_seq ?? null),
    };
    return { kind: 'ok', proof };
  }

  /** The current chain head when it covers `seq`, with whether its signature verifies (null: unsigned, or no key). */
  function signedHeadCovering(
    head: ConfirmationChainHeadTable | undefined,
    seq: number,
  ): ProofData['signed_head'] {
    if (!head) return null;
    const headSeq = Number(head.seq);
    return headSeq >= seq
      ? {
          seq: headSeq,
          hash: head.hash,
          signature: head.signature,
          signature_valid:
            head.signature === null || !publicKey
              ? null
              : verifyHeadSignature(publicKey, headSeq, head.hash, head.signature),
          public_key: publicPem,
        }
      : null;
  }

  /**
   * The proof of a validation's audit record that carries a consultation number, while it is kept;
   * not found as for the record itself, and for a record without a consultation number.
   */
  async function auditProof(
    principal: ApiKeyPrincipal,
    requestId: string,
    preference: LanguagePreference,
  ): Promise<ProofOutcome> {
    const found = await audits.find(principal, requestId);
    if (found.kind === 'refused') return found;
    const record = found.audit;
    const evidence = auditEvidence(record);
    if (evidence.kind !== 'ok') return evidence;
    const language = chooseLanguage(preference, evidence.requester);
    const proof = validationProof(principal, record, evidence, language, clock.now());
    return { kind: 'ok', proof };
  }

  return { confirmationProof, auditProof };
}

/** The company details a confirmation asked to compare (null where a field was not sent). */
function askedCompany(company: Json): NonNullable<ProofData['asked']['company']> {
  return {
    name: text(company.name),
    street: text(company.street),
    postcode: text(company.postcode),
    town: text(company.town),
  };
}

/** The authority's answer of a stored confirmation: its row and its response's `data`. */
function confirmationAnswer(
  row: ConfirmationsTable,
  data: Json,
  language: ProofLanguage,
): ProofData['answer'] {
  const matches = objectAt(data.matches);
  const company = objectAt(data.company);
  return {
    source: 'taxauth',
    status_code: toTaxauthCode(row.taxauth_status),
    status_text: statusText(row.taxauth_status, language),
    valid: Number(row.valid) === 1,
    qualified: Number(row.qualified) === 1,
    matches: {
      name: match(matches.name),
      street: match(matches.street),
      postcode: match(matches.postcode),
      town: match(matches.town),
    },
    company: {
      name: text(company.name),
      street: text(company.street),
      postcode: text(company.postcode),
      town: text(company.town),
      address: null,
    },
    valid_from: text(data.valid_from),
    valid_to: text(data.valid_to),
    taxauth_id: row.upstream_id,
    consultation_number: null,
    authority_time: text(parseObject(row.upstream_response).anfrageZeitpunkt),
    register: null,
  };
}

/**
 * What an audit record's proof rests on: a validation's consultation number, or a national
 * register's answer; not found for a confirmation's record and for a record with neither.
 */
function auditEvidence(record: AuditRecord): AuditEvidence | Refusal {
  if (record.endpoint === 'confirm') {
    return refusal(
      'not_found',
      'This audit record is of a qualified confirmation: its proof is at /v1/confirmations/{confirmation_id}/proof.',
    );
  }
  const response = parseObject(record.responseJson);
  const data = objectAt(response.data);
  const meta = objectAt(response.meta);
  const register = registerAnswer(meta);
  // A register's answer is evidence of its own: its consultation number (PL `requestId`) if any.
  const consultation = text(data.verify_id) ?? register?.consultation ?? null;
  if (record.endpoint !== 'validate' || (consultation === null && register === null)) {
    return refusal(
      'not_found',
      "This audit record carries no consultation number: proofs exist for validations made with requester_vat_number, and for a national register's answer given because VIES could not answer.",
    );
  }
  const asked = objectAt(parseObject(record.requestBodyJson));
  return {
    kind: 'ok',
    data,
    meta,
    register,
    consultation,
    asked,
    requester: text(asked.requester_vat_number),
  };
}

/** The proof of a validation's audit record: the stored response is the evidence, hashed byte for byte. */
function validationProof(
  principal: ApiKeyPrincipal,
  record: AuditRecord,
  evidence: AuditEvidence,
  language: ProofLanguage,
  now: Date,
): ProofData {
  const { data, meta, register, consultation, asked, requester } = evidence;
  return {
    kind: 'validation',
    id: record.requestId,
    request_id: record.requestId,
    mode: principal.mode,
    language,
    generated_at: now.toISOString(),
    asked: {
      requester_vat_number: requester,
      vat_number: text(data.vat_number) ?? text(asked.vat_number) ?? '',
      company: null,
    },
    answer: validationAnswer(data, meta, register, consultation),
    times: {
      received_at: uuidV7Time(record.requestId),
      answered_at: text(data.verified_at),
      stored_at: record.createdAt,
      kept_until: record.expiresAt,
    },
    record: { algorithm: 'sha256', hash: sha256Hex(record.responseJson), hash_matches: null },
    chain: null,
    signed_head: null,
    timestamp: null,
    verification: PROOF_TEXTS[language].steps.validation(record.requestId, formatTime(record.expiresAt, ''), {
      consultation: consultation !== null,
      register: register !== null,
    }),
  };
}

/** The registry's answer an audited validation response carries. */
function validationAnswer(
  data: Json,
  meta: Json,
  register: AuditEvidence['register'],
  consultation: string | null,
): ProofData['answer'] {
  const company = data.company === null ? null : objectAt(data.company);
  return {
    source: text(meta.source) ?? 'vies',
    status_code: null,
    status_text: null,
    valid: flag(data.valid),
    qualified: null,
    matches: null,
    company: company
      ? { name: text(company.name), street: null, postcode: null, town: null, address: text(company.address) }
      : null,
    valid_from: null,
    valid_to: null,
    taxauth_id: null,
    consultation_number: consultation,
    authority_time: null,
    register: register?.answer ?? null,
  };
}

export type ProofsService = ReturnType<typeof createProofsService>;

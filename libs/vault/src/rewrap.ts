import { assertNever } from '@broker/domain';
import { ENVELOPE_COLUMNS, type EnvelopeColumn, type EnvelopeStore, type StoredEnvelope } from '@broker/persistence';
import { bindings } from './bindings';
import type { EnvelopeCipher } from './envelope-cipher';

/** Progress of one column. */
export interface RewrapProgress {
  readonly column: EnvelopeColumn;
  readonly scanned: number;
  readonly rewrapped: number;
  /** Changed by someone else meanwhile (already under the current KEK). */
  readonly skipped: number;
}

function bindingOf(column: EnvelopeColumn, row: StoredEnvelope): string {
  switch (column) {
    case 'services.client_secret_envelope':
      return bindings.clientSecret(row.owner.serviceId as string);
    case 'signing_keys.private_key_envelope':
      return bindings.signingKey(row.owner.kid as string);
    case 'third_party_sessions.access_token_envelope':
      return bindings.sessionToken(row.owner.serviceId as string, row.owner.principal as string, 'access_token');
    case 'third_party_sessions.refresh_token_envelope':
      return bindings.sessionToken(row.owner.serviceId as string, row.owner.principal as string, 'refresh_token');
    case 'webhooks.secret_envelope':
      return bindings.webhookSecret(row.owner.webhookId as string);
    default:
      return assertNever(column, 'envelope column');
  }
}

/**
 * Re-wraps every stored data key under the current KEK, in batches, online and
 * idempotently (values already under the current KEK are left alone), calling
 * `report` after each batch. Afterwards the old KEKs can leave the config.
 */
export async function rewrapAll(
  store: EnvelopeStore,
  cipher: EnvelopeCipher,
  report: (progress: RewrapProgress) => void,
  batchSize = 200,
): Promise<RewrapProgress[]> {
  const totals: RewrapProgress[] = [];
  for (const column of ENVELOPE_COLUMNS) {
    let progress: RewrapProgress = { column, scanned: 0, rewrapped: 0, skipped: 0 };
    let after = '';
    for (;;) {
      const rows = await store.batch(column, after, batchSize);
      if (rows.length === 0) break;
      let rewrapped = 0;
      let skipped = 0;
      for (const row of rows) {
        if (cipher.isCurrent(row.envelope)) continue;
        if (await store.replace(column, row.key, row.envelope, cipher.rewrap(row.envelope, bindingOf(column, row))))
          rewrapped += 1;
        else skipped += 1;
      }
      after = (rows[rows.length - 1] as StoredEnvelope).key;
      progress = {
        column,
        scanned: progress.scanned + rows.length,
        rewrapped: progress.rewrapped + rewrapped,
        skipped: progress.skipped + skipped,
      };
      report(progress);
    }
    totals.push(progress);
  }
  return totals;
}

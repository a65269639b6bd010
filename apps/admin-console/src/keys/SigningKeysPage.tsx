import { useState, type ReactNode } from 'react';
import { ApiFailure } from '../api/client';
import { useReadOnly } from '../api/queries';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ConflictNotice } from '../components/ConflictNotice';
import { date, dateTime, days } from '../components/format';
import { PageTitle } from '../components/PageTitle';
import { ReadOnlyNotice, WriteButton } from '../components/ReadOnly';
import { asSentence } from '../components/words';
import { ErrorView, Loading } from '../errors/ErrorView';
import { useOverview } from '../overview/overview';
import {
  ALGORITHMS,
  HalfRotated,
  useMakeCurrent,
  useRetire,
  useRotate,
  useAddKey,
  useSigningKeys,
  type Algorithm,
  type SigningKey,
} from './keys';

type Pending =
  | { readonly kind: 'rotate' }
  | { readonly kind: 'add' }
  | { readonly kind: 'current'; readonly key: SigningKey }
  | { readonly kind: 'retire'; readonly key: SigningKey };

/** What happened last, said on the page (success or why not). */
type Outcome = { readonly tone: 'success' | 'danger'; readonly content: ReactNode } | null;

const DAY_MS = 86_400_000;

function ageDays(key: SigningKey): number {
  return Math.floor((Date.now() - new Date(key.created_at).getTime()) / DAY_MS);
}

/** A 409 or another refusal of a signing key change, in words. */
function refusal(error: unknown, kid?: string): ReactNode {
  const failure = error instanceof HalfRotated ? error.cause : error;
  const prefix =
    error instanceof HalfRotated ? (
      <p>
        The new key <code>{error.kid}</code> was added and published, but it could not be made current. Make it current
        from the list below.
      </p>
    ) : null;
  if (failure instanceof ApiFailure && failure.status === 409 && failure.code === 'last_key')
    return (
      <ConflictNotice
        what={`Key ${kid ?? ''} cannot be retired:`}
        why="it is the only published key, so nothing could sign or verify tokens without it. Add a new key and make it current first (Rotate), then retire this one."
      />
    );
  if (failure instanceof ApiFailure && failure.status === 409 && failure.code === 'current_key')
    return (
      <ConflictNotice
        what={`Key ${kid ?? ''} cannot be retired:`}
        why="it is the current key, which signs every new token. Make another key current first, then retire this one once the tokens it signed have expired."
      />
    );
  const words =
    failure instanceof ApiFailure
      ? asSentence(failure.message)
      : 'The broker could not be reached. Check your connection and try again.';
  return (
    <div className="notice danger" role="alert">
      {prefix}
      <strong>Nothing changed.</strong> {words}
    </div>
  );
}

function KeyStatus({ signingKey }: { readonly signingKey: SigningKey }) {
  if (signingKey.deleted_at !== null) return <span className="badge">Retired {date(signingKey.deleted_at)}</span>;
  if (signingKey.is_current) return <span className="badge success">Current: signs new tokens</span>;
  return <span className="badge info">Published: verifies only</span>;
}

function HowRotationWorks() {
  return (
    <details className="panel explainer">
      <summary>What each step means for tokens in flight</summary>
      <ol>
        <li>
          <strong>Add a key.</strong> It is published at once (the broker&apos;s JWKS, <code>/oauth2/jwks.json</code>),
          so resource servers and gateways can learn it before it signs anything. Nothing else changes.
        </li>
        <li>
          <strong>Make it current.</strong> New tokens are signed with it from then on. Tokens the previous key signed
          keep verifying until they expire, as long as that key stays published.
        </li>
        <li>
          <strong>Retire the old key</strong> once its tokens have expired (access tokens live one hour unless{' '}
          <code>oauth2_authorization_server.local.token_ttl</code> says otherwise). It leaves the JWKS, and every token
          it signed stops verifying at once: agents still holding one are refused and must get a new token. Retire at
          once only when a key has leaked.
        </li>
      </ol>
      <p>
        <strong>Rotate</strong> does the first two steps together.
      </p>
    </details>
  );
}

export function SigningKeysPage() {
  const keys = useSigningKeys();
  const overview = useOverview();
  const readOnly = useReadOnly();
  const [pending, setPending] = useState<Pending | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [algorithm, setAlgorithm] = useState<Algorithm>('ES256');
  const rotate = useRotate();
  const add = useAddKey();
  const makeCurrent = useMakeCurrent();
  const retire = useRetire();
  const busy = rotate.isPending || add.isPending || makeCurrent.isPending || retire.isPending;

  const live = (keys.data ?? []).filter((key) => key.deleted_at === null);
  const retired = (keys.data ?? []).filter((key) => key.deleted_at !== null);
  const current = live.find((key) => key.is_current);

  const close = () => setPending(null);
  const confirm = () => {
    if (pending === null) return;
    const done = (content: ReactNode) => {
      setOutcome({ tone: 'success', content });
      close();
    };
    const failed = (error: unknown, kid?: string) => {
      setOutcome({ tone: 'danger', content: refusal(error, kid) });
      close();
    };
    switch (pending.kind) {
      case 'rotate':
        rotate.mutate(algorithm, {
          onSuccess: (key) =>
            done(
              <>
                Rotated: <code>{key.kid}</code> is now current and signs new tokens.
                {current !== undefined ? (
                  <>
                    {' '}
                    Tokens signed with <code>{current.kid}</code> keep verifying until they expire; retire it after
                    that.
                  </>
                ) : null}
              </>,
            ),
          onError: (error) => failed(error),
        });
        return;
      case 'add':
        add.mutate(algorithm, {
          onSuccess: (key) =>
            done(
              <>
                Key <code>{key.kid}</code> added and published. It signs nothing until you make it current.
              </>,
            ),
          onError: (error) => failed(error),
        });
        return;
      case 'current':
        makeCurrent.mutate(pending.key.kid, {
          onSuccess: (key) =>
            done(
              <>
                <code>{key.kid}</code> is now current: new tokens are signed with it.
              </>,
            ),
          onError: (error) => failed(error, pending.key.kid),
        });
        return;
      case 'retire':
        retire.mutate(pending.key.kid, {
          onSuccess: () =>
            done(
              <>
                Key <code>{pending.key.kid}</code> retired: it left the published keys, and the tokens it signed no
                longer verify.
              </>,
            ),
          onError: (error) => failed(error, pending.key.kid),
        });
        return;
    }
  };

  return (
    <>
      <PageTitle
        title="Signing keys"
        lead="The keys the broker signs access tokens with. Resource servers verify tokens against the published ones."
      />
      <ReadOnlyNotice />
      {overview.data?.mode === 'proxy' ? (
        <p className="notice info">
          This broker runs in proxy mode: your identity provider signs the tokens, and these keys sign nothing.
        </p>
      ) : null}
      <HowRotationWorks />
      {outcome !== null ? (
        outcome.tone === 'success' ? (
          <p className="notice success" role="status">
            {outcome.content}
          </p>
        ) : (
          <div>{outcome.content}</div>
        )
      ) : null}
      <section className="panel" aria-labelledby="rotate-heading">
        <h2 id="rotate-heading">Rotate</h2>
        <div className="rotate-row">
          <div className="field inline">
            <label htmlFor="algorithm">Algorithm of the new key</label>
            <select
              id="algorithm"
              value={algorithm}
              disabled={readOnly}
              onChange={(event) => setAlgorithm(event.target.value as Algorithm)}
            >
              {ALGORITHMS.map(({ value, label }) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          <div className="actions">
            <WriteButton className="button primary" disabled={busy} onClick={() => setPending({ kind: 'rotate' })}>
              Rotate now
            </WriteButton>
            <WriteButton className="button" disabled={busy} onClick={() => setPending({ kind: 'add' })}>
              Add key only
            </WriteButton>
          </div>
        </div>
      </section>
      <section className="panel" aria-labelledby="keys-heading">
        <h2 id="keys-heading">Keys</h2>
        {keys.isPending ? (
          <Loading label="Loading the signing keys…" />
        ) : keys.isError ? (
          <ErrorView error={keys.error} />
        ) : live.length === 0 && retired.length === 0 ? (
          <p className="muted">No signing key yet.</p>
        ) : (
          <KeyTable keys={[...live, ...retired]} busy={busy} onAct={setPending} />
        )}
      </section>
      <ConfirmDialog
        open={pending !== null}
        title={dialogTitle(pending)}
        confirmLabel={confirmLabel(pending)}
        destructive={pending?.kind === 'retire'}
        busy={busy}
        onConfirm={confirm}
        onCancel={close}
      >
        <DialogBody pending={pending} current={current} algorithm={algorithm} />
      </ConfirmDialog>
    </>
  );
}

function KeyTable(props: {
  readonly keys: readonly SigningKey[];
  readonly busy: boolean;
  readonly onAct: (pending: Pending) => void;
}) {
  const { keys, busy, onAct } = props;
  return (
    <div className="table-wrap">
      <table className="stacked">
        <thead>
          <tr>
            <th scope="col">Key id</th>
            <th scope="col">Algorithm</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.kid} className={key.deleted_at !== null ? 'retired' : undefined}>
              <td data-label="Key id">
                <code>{key.kid}</code>
              </td>
              <td data-label="Algorithm">{key.algorithm}</td>
              <td data-label="Status">
                <KeyStatus signingKey={key} />
              </td>
              <td data-label="Created">
                <span title={dateTime(key.created_at)}>{date(key.created_at)}</span>{' '}
                <span className="muted">({days(ageDays(key))} old)</span>
              </td>
              <td className="row-actions">
                {key.deleted_at === null && !key.is_current ? (
                  <>
                    <WriteButton
                      className="button small"
                      disabled={busy}
                      aria-label={`Make ${key.kid} current`}
                      onClick={() => onAct({ kind: 'current', key })}
                    >
                      Make current
                    </WriteButton>
                    <WriteButton
                      className="button small danger"
                      disabled={busy}
                      aria-label={`Retire ${key.kid}`}
                      onClick={() => onAct({ kind: 'retire', key })}
                    >
                      Retire
                    </WriteButton>
                  </>
                ) : key.deleted_at === null ? (
                  <WriteButton
                    className="button small danger"
                    disabled={busy}
                    aria-label={`Retire ${key.kid}`}
                    onClick={() => onAct({ kind: 'retire', key })}
                  >
                    Retire
                  </WriteButton>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function dialogTitle(pending: Pending | null): string {
  switch (pending?.kind) {
    case 'rotate':
      return 'Rotate the signing key?';
    case 'add':
      return 'Add a signing key?';
    case 'current':
      return `Make ${pending.key.kid} current?`;
    case 'retire':
      return `Retire ${pending.key.kid}?`;
    case undefined:
      return '';
  }
}

function confirmLabel(pending: Pending | null): string {
  switch (pending?.kind) {
    case 'rotate':
      return 'Rotate';
    case 'add':
      return 'Add key';
    case 'current':
      return 'Make current';
    case 'retire':
      return 'Retire key';
    case undefined:
      return 'Confirm';
  }
}

function DialogBody(props: {
  readonly pending: Pending | null;
  readonly current: SigningKey | undefined;
  readonly algorithm: Algorithm;
}) {
  const { pending, current, algorithm } = props;
  switch (pending?.kind) {
    case 'rotate':
      return (
        <>
          <p>A new {algorithm} key is added, published and made current: every new token is signed with it.</p>
          {current !== undefined ? (
            <p>
              Tokens signed with <code>{current.kid}</code> keep verifying until they expire. Retire{' '}
              <code>{current.kid}</code> after that.
            </p>
          ) : null}
        </>
      );
    case 'add':
      return (
        <p>
          A new {algorithm} key is added and published, so verifiers can learn it. It signs nothing until you make it
          current.
        </p>
      );
    case 'current':
      return (
        <>
          <p>
            New tokens are signed with <code>{pending.key.kid}</code> from now on.
          </p>
          {current !== undefined ? (
            <p>
              Tokens signed with <code>{current.kid}</code> keep verifying until they expire, as long as it stays
              published.
            </p>
          ) : null}
        </>
      );
    case 'retire':
      return (
        <>
          <p>
            <code>{pending.key.kid}</code> leaves the published keys at once.{' '}
            <strong>Every token it signed stops verifying</strong>, even those not expired yet: agents holding one are
            refused and must get a new token.
          </p>
          <p>Retire a key once its tokens have expired, or at once if it leaked.</p>
        </>
      );
    case undefined:
      return null;
  }
}

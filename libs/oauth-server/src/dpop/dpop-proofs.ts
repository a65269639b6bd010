import { createHash } from 'node:crypto';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, OAuthError, type AsymmetricAlgorithm } from '@broker/domain';
import { DpopProofReplayRepository } from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';
import {
  candidateKeys,
  decodeJson,
  decodeJws,
  importVerificationKeys,
  isObject,
  JwsRefused,
  signatureValid,
  type VerificationKey,
} from '../jwt/compact-jws';
import { DpopNonces } from './dpop-nonces';
import { sha256Thumbprint, thumbprintInput } from './jwk-thumbprint';

/** How far ahead of the server's clock a proof's `iat` may be (RFC 9449 §11.1: clocks drift). */
const FUTURE_LEEWAY_SECONDS = 5;
/** RFC 7517 §9.2 and RFC 7518 §6: members only a private or symmetric key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
/** Proof keys imported and kept (by their thumbprint's input); the map is emptied when full. */
const KEY_CACHE_ENTRIES = 10_000;
const MAX_JTI_LENGTH = 256;

/** A proof's key, imported once: what verifies its signatures, and its RFC 7638 thumbprint. */
interface ProofKey {
  readonly key: VerificationKey;
  readonly jkt: string;
}

const refused = (description: string): OAuthError => new OAuthError('invalid_dpop_proof', description);

/** RFC 3986 §2.3: characters a percent-encoding of which means the character itself. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const PERCENT_ENCODED = /%[0-9A-Fa-f]{2}/g;

/**
 * An `htu` or a request URL as compared (RFC 9449 §4.3 step 9): without query and fragment,
 * after the syntax- and scheme-based normalisation of RFC 3986 §6.2.2-6.2.3: what the WHATWG
 * URL parser applies (scheme and host in lower case, the default port dropped, dot segments
 * resolved, an empty path as `/`), then the path's percent-encodings with upper-case digits,
 * those of unreserved characters decoded. Undefined when it is not an absolute http(s) URL.
 */
export function normalisedHtu(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const path = url.pathname.replace(PERCENT_ENCODED, (encoding) => {
    const character = String.fromCharCode(Number.parseInt(encoding.slice(1), 16));
    return UNRESERVED.test(character) ? character : encoding.toUpperCase();
  });
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * DPoP proofs (RFC 9449) of the local authorization server, checked as §4.3 lists: one
 * `DPoP` header holding one compact JWS, `typ` `dpop+jwt`, an `alg` of
 * `local.dpop.signing_algorithms` (asymmetric only), a public `jwk` that verifies the
 * signature, `htm` and `htu` of this request, an `iat` at most `proof_max_age` old (and
 * 5 s ahead), the server's nonce when `nonce.required` (§8), and a `jti` not seen before
 * for that key on any replica (`dpop_proof_replays`, one statement). The key is imported
 * once per thumbprint; nothing is fetched. Refusals say which check failed, never the proof.
 */
@Injectable()
export class DpopProofs {
  readonly enabled: boolean;
  readonly algorithms: readonly AsymmetricAlgorithm[];
  private readonly requiredByDefault: boolean;
  private readonly maxAgeSeconds: number;
  private readonly nonces: DpopNonces | undefined;
  /** The token endpoint's URL as clients address it (the metadata's `token_endpoint`), normalised. */
  private readonly tokenEndpoint: string;
  private readonly keys = new Map<string, ProofKey | null>();

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly replays: DpopProofReplayRepository,
    private readonly clock: Clock,
  ) {
    const settings = config.oauth2_authorization_server.local.dpop;
    this.enabled = settings.enabled;
    this.algorithms = [...settings.signing_algorithms];
    this.requiredByDefault = settings.required;
    this.maxAgeSeconds = Math.floor(settings.proof_max_age / 1000);
    this.nonces = settings.nonce.required
      ? new DpopNonces(config.third_party_oauth2.jwe_keys, settings.nonce.lifetime)
      : undefined;
    this.tokenEndpoint = normalisedHtu(`${config.server.enduser.public_url}/oauth2/token`) as string;
  }

  /**
   * The key a token request proved possession of (RFC 9449 §5): its thumbprint, or undefined
   * when no proof was sent and none is required. `required` is the client's
   * `dpop_bound_access_tokens` (§5.2); null falls back to `local.dpop.required`.
   */
  async forTokenRequest(header: string | string[] | undefined, required: boolean | null): Promise<string | undefined> {
    const mustProve = required ?? this.requiredByDefault;
    if (header === undefined) {
      if (mustProve) throw refused('this client must send a DPoP proof (RFC 9449) with its token requests');
      return undefined;
    }
    // RFC 9449 §5: a server that does not do DPoP issues Bearer tokens; one that must bind cannot.
    if (!this.enabled) {
      if (mustProve) throw refused('this client requires DPoP, which is turned off on this server');
      return undefined;
    }
    return this.verify(header, 'POST', this.tokenEndpoint);
  }

  /** The `DPoP-Nonce` header for a successful answer to a request that carried a proof (§8.2), when nonces are on. */
  nonceHeader(): Readonly<Record<string, string>> | undefined {
    return this.nonces === undefined ? undefined : { 'DPoP-Nonce': this.nonces.issue(this.clock.nowMs()) };
  }

  /** Checks a proof for `method` on `htu` (normalised) and spends its `jti`; the thumbprint of its key. */
  async verify(header: string | string[], method: string, htu: string): Promise<string> {
    // Node joins a repeated header's values with ", ": a compact JWS has no comma.
    if (Array.isArray(header) || header.includes(',')) throw refused('more than one DPoP header was sent');
    let jws;
    try {
      jws = decodeJws(header, this.algorithms);
    } catch (error) {
      if (!(error instanceof JwsRefused)) throw error;
      throw refused(
        error.code === 'alg not allowed'
          ? 'the DPoP proof is not signed with an accepted algorithm'
          : 'the DPoP header is not one well-formed JWT',
      );
    }
    const { header: joseHeader } = jws;
    if (typeof joseHeader.typ !== 'string' || joseHeader.typ.toLowerCase() !== 'dpop+jwt')
      throw refused('the DPoP proof must have typ dpop+jwt');
    const proofKey = this.keyOf(joseHeader.jwk);
    if (candidateKeys([proofKey.key], jws.alg, undefined).length === 0 || !signatureValid(jws, proofKey.key.key))
      throw refused('the DPoP proof signature does not verify with its jwk');
    const claims = this.claimsOf(jws.payloadSegment);
    if (claims.htm !== method) throw refused('the DPoP proof htm does not match the request method');
    // The URL exactly as the metadata names it needs no parsing (what every client sends).
    if (typeof claims.htu !== 'string' || (claims.htu !== htu && normalisedHtu(claims.htu) !== htu))
      throw refused('the DPoP proof htu does not match this endpoint');
    const now = this.clock.nowMs();
    const nowSeconds = Math.floor(now / 1000);
    if (claims.iat > nowSeconds + FUTURE_LEEWAY_SECONDS) throw refused('the DPoP proof iat is in the future');
    if (claims.iat < nowSeconds - this.maxAgeSeconds) throw refused('the DPoP proof has expired (iat too old)');
    if (this.nonces !== undefined && !this.nonces.accepts(claims.nonce, now)) {
      throw new OAuthError(
        'use_dpop_nonce',
        claims.nonce === undefined
          ? 'the DPoP proof must carry the nonce this server provides'
          : 'the DPoP proof nonce is not valid or has expired',
        undefined,
        undefined,
        { 'DPoP-Nonce': this.nonces.issue(now) },
      );
    }
    // §11.1: each key's jti once while the proof could be accepted (iat + max age), on every replica.
    const replayKey = createHash('sha256').update(`${proofKey.jkt}.${claims.jti}`, 'utf8').digest();
    const expiresAt = new Date((claims.iat + this.maxAgeSeconds + 1) * 1000);
    if (!(await this.replays.claimFirstUse(replayKey, expiresAt, new Date(now))))
      throw refused('the DPoP proof was already used (its jti was seen before)');
    return proofKey.jkt;
  }

  /** The header's `jwk`: a public key of a type we verify, imported once per thumbprint. */
  private keyOf(jwk: unknown): ProofKey {
    if (!isObject(jwk)) throw refused('the DPoP proof must carry its public key as jwk');
    if (PRIVATE_MEMBERS.some((member) => jwk[member] !== undefined))
      throw refused('the DPoP proof jwk must not contain private key material');
    const input = thumbprintInput(jwk);
    if (input === undefined) throw refused('the DPoP proof jwk is not a usable public key');
    let known = this.keys.get(input);
    if (known === undefined) {
      const [key] = importVerificationKeys([JSON.parse(input) as unknown]);
      known = key === undefined ? null : { key, jkt: sha256Thumbprint(input) };
      if (this.keys.size >= KEY_CACHE_ENTRIES) this.keys.clear();
      this.keys.set(input, known);
    }
    if (known === null) throw refused('the DPoP proof jwk is not a usable public key');
    return known;
  }

  /** The claims §4.2 requires, with their types. */
  private claimsOf(segment: string): { jti: string; htm: unknown; htu: unknown; iat: number; nonce: unknown } {
    let claims: Record<string, unknown>;
    try {
      claims = decodeJson(segment, 'the claims');
    } catch (error) {
      if (!(error instanceof JwsRefused)) throw error;
      throw refused('the DPoP proof claims are not a JSON object');
    }
    const { jti, htm, htu, iat, nonce } = claims;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH)
      throw refused('the DPoP proof must have a jti of 1-256 characters');
    if (typeof htm !== 'string' || typeof htu !== 'string') throw refused('the DPoP proof must have htm and htu');
    if (typeof iat !== 'number' || !Number.isFinite(iat)) throw refused('the DPoP proof must have a numeric iat');
    return { jti, htm, htu, iat, nonce };
  }
}

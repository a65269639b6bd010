import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ApiSchemaWith } from './open-schema';

/** RFC 7517/7518 private key members: never published (an upstream's are stripped). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * A public signing key (RFC 7517 §4). The broker's own keys carry `kty`, `kid` (the RFC
 * 7638 thumbprint), `use` `sig`, `alg` and the public members of their type (EC: `crv`,
 * `x`, `y`; RSA: `n`, `e`; OKP: `crv`, `x`). An upstream's keys (proxy and hybrid modes)
 * are republished as the upstream wrote them, other members included, minus any private
 * member; a private member never appears.
 */
@ApiSchemaWith({ name: 'JsonWebKey', additionalProperties: true, propertyNames: { not: { enum: PRIVATE_MEMBERS } } })
export class JsonWebKeyView {
  /** Key type. */
  @ApiProperty({ example: 'EC' })
  kty!: string;
  /** Key id (the broker's own keys: RFC 7638 SHA-256 thumbprint). */
  @ApiPropertyOptional()
  kid?: string;
  @ApiPropertyOptional({ example: 'sig' })
  use?: string;
  /** ES256, RS256 or EdDSA for the broker's own keys. */
  @ApiPropertyOptional({ example: 'ES256' })
  alg?: string;
  /** EC and OKP: the curve. */
  @ApiPropertyOptional({ example: 'P-256' })
  crv?: string;
  /** EC and OKP: the public x coordinate (base64url). */
  @ApiPropertyOptional()
  x?: string;
  /** EC: the public y coordinate (base64url). */
  @ApiPropertyOptional()
  y?: string;
  /** RSA: the modulus (base64url). */
  @ApiPropertyOptional()
  n?: string;
  /** RSA: the public exponent (base64url). */
  @ApiPropertyOptional()
  e?: string;
}

/**
 * The JWK set (RFC 7517 §5): the broker's signing keys (local), the upstream's (proxy), or
 * both (hybrid). A new key appears at once; a removed one disappears.
 */
@ApiSchema({ name: 'JsonWebKeySet' })
export class JsonWebKeySetResponse {
  @ApiProperty({ type: [JsonWebKeyView] })
  keys!: JsonWebKeyView[];
}

/** `GET /oauth2/jwks.json` (docs/oauth2.md, "JWKS"). */
export const JWKS_RESPONSE_HEADERS: HeadersObject = {
  'Cache-Control': { description: '`public, max-age=300`', schema: { type: 'string', example: 'public, max-age=300' } },
};

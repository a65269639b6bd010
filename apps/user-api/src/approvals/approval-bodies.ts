import type { ApprovalRequestInput, ApproveInput } from '@broker/approvals';
import { ApiError, type FieldIssue, type ApprovalPersistence, type RiskLevel } from '@broker/domain';
import { RefusedJsonBody } from '@broker/http';

/**
 * The approvals API's JSON bodies, parsed by hand rather than validated against DTO
 * classes: the validation pipe refuses keys named `__proto__`, `constructor` and
 * `prototype` (Nest's own would delete them), and a gateway's `arguments` (and a user's
 * `params_pattern`) must be kept exactly as sent, or `arguments_hash` would not match the
 * gateway's. The body parser has already bounded their nesting (64 levels below the body's
 * top, so 64 counting `arguments` itself) and refused numbers beyond the double range.
 * Failures are 400 `bad request` naming each field (docs/approvals.md).
 */

const TOOL_NAME_MAX = 255;
const RISK_LEVELS: readonly RiskLevel[] = ['low', 'medium', 'critical'];
const PERSISTENCES: readonly ApprovalPersistence[] = ['once', 'session', 'permanent'];

type JsonObject = Record<string, unknown>;

function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function has(object: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

class BodyIssues {
  readonly issues: FieldIssue[] = [];

  add(field: string, problem: string): void {
    this.issues.push({ field, problem });
  }

  throwIfAny(): void {
    if (this.issues.length > 0)
      throw new ApiError(
        'bad request',
        this.issues.map((issue) => `${issue.field} ${issue.problem}`).join('; '),
        this.issues,
      );
  }
}

function body(raw: unknown): JsonObject {
  if (raw === undefined) return {};
  if (raw instanceof RefusedJsonBody) throw raw.error;
  if (!isJsonObject(raw))
    throw new ApiError('bad request', 'the request body must be a JSON object', [
      { field: 'body', problem: 'must be a JSON object' },
    ]);
  return raw;
}

function onlyFields(object: JsonObject, allowed: readonly string[], issues: BodyIssues): void {
  for (const key of Object.keys(object)) if (!allowed.includes(key)) issues.add(key, 'is not a known field');
}

function jsonObjectField(object: JsonObject, field: string, issues: BodyIssues): JsonObject {
  const value = object[field];
  if (!has(object, field) || value === undefined) issues.add(field, 'is required');
  else if (!isJsonObject(value)) issues.add(field, 'must be a JSON object');
  else return value;
  return {};
}

/** `POST /api/approvals`: `metadata` (object), `tool_name` (1-255 characters), `arguments` (object), optional `risk_level` (not null). */
export function parseCreateApprovalBody(raw: unknown): ApprovalRequestInput {
  const object = body(raw);
  const issues = new BodyIssues();
  onlyFields(object, ['metadata', 'tool_name', 'arguments', 'risk_level'], issues);
  const metadata = jsonObjectField(object, 'metadata', issues);
  const args = jsonObjectField(object, 'arguments', issues);
  const toolName = object.tool_name;
  if (typeof toolName !== 'string') issues.add('tool_name', 'is required and must be a string');
  else if (toolName.length === 0 || [...toolName].length > TOOL_NAME_MAX)
    issues.add('tool_name', `must be 1-${TOOL_NAME_MAX} characters`);
  const risk = object.risk_level;
  // An enum refuses null: omitting it is how a gateway gives no risk level.
  if (risk !== undefined && !RISK_LEVELS.includes(risk as RiskLevel))
    issues.add('risk_level', `must be one of ${RISK_LEVELS.join(', ')} (omit it for none)`);
  issues.throwIfAny();
  return { toolName: toolName as string, arguments: args, metadata, riskLevel: risk as RiskLevel | undefined };
}

function paramsPatternField(object: JsonObject, issues: BodyIssues): JsonObject | null | undefined {
  const value = object.params_pattern;
  if (value === undefined || value === null) return value;
  if (!isJsonObject(value)) {
    issues.add('params_pattern', 'must be an object of argument name to glob');
    return undefined;
  }
  return value;
}

/** `POST /api/approvals/{id}/approve`: `persistence` (once, session, permanent), optional `params_pattern`. */
export function parseApproveBody(raw: unknown): ApproveInput {
  const object = body(raw);
  const issues = new BodyIssues();
  onlyFields(object, ['persistence', 'params_pattern'], issues);
  const persistence = object.persistence;
  if (!PERSISTENCES.includes(persistence as ApprovalPersistence))
    issues.add('persistence', `is required: one of ${PERSISTENCES.join(', ')}`);
  const paramsPattern = paramsPatternField(object, issues);
  issues.throwIfAny();
  return { persistence: persistence as ApprovalPersistence, paramsPattern };
}

/** `POST /api/approvals/{id}/scope-preview`: optional `params_pattern`. */
export function parseScopePreviewBody(raw: unknown): JsonObject | null | undefined {
  const object = body(raw);
  const issues = new BodyIssues();
  onlyFields(object, ['params_pattern'], issues);
  const paramsPattern = paramsPatternField(object, issues);
  issues.throwIfAny();
  return paramsPattern;
}

/** The health of a dependency that does not change the top-level status (`components` of `GET /health`: docs/operating.md, "Health"). */
export type ComponentStatus = 'healthy' | 'degraded';

/**
 * Where features register dependency checks shown under `components` of `GET /health`
 * (for example `upstream_jwks` in proxy and hybrid modes). One per application.
 */
export class ComponentHealth {
  private readonly checks = new Map<string, () => ComponentStatus>();

  register(name: string, check: () => ComponentStatus): void {
    this.checks.set(name, check);
  }

  /** Current statuses, or undefined when nothing is registered. */
  report(): Record<string, ComponentStatus> | undefined {
    if (this.checks.size === 0) return undefined;
    return Object.fromEntries([...this.checks].map(([name, check]) => [name, check()]));
  }
}

import type { Histogram } from 'prom-client';
import { methodLabel, OTHER, statusClassLabel, type ServerLabel } from './metric-labels';

/** Distinct route templates kept per server and method; beyond it (a code bug, not traffic) routes count as `other`. */
const MAX_ROUTES = 1_000;

type Labels = 'server' | 'route' | 'method' | 'status_class';
type Child = Histogram.Internal<Labels>;

/**
 * `broker_http_request_duration_seconds` of one server, for both entrances. `route` must be
 * a template the code registered (`/api/agents/:agentId`) or `unmatched`, never a raw path.
 */
export interface HttpServerMetrics {
  observe(method: string | undefined, route: string, status: number, seconds: number): void;
}

export const NO_HTTP_SERVER_METRICS: HttpServerMetrics = { observe: () => undefined };

/**
 * Label children are built on first use and kept per method, route template and status
 * class, so a request costs three map lookups and an observe (no label string is built).
 */
export class HistogramHttpServerMetrics implements HttpServerMetrics {
  private readonly byMethod = new Map<string, Map<string, Map<string, Child>>>();

  constructor(
    private readonly histogram: Histogram<Labels>,
    private readonly server: ServerLabel,
  ) {}

  observe(method: string | undefined, route: string, status: number, seconds: number): void {
    const methodName = methodLabel(method);
    let routes = this.byMethod.get(methodName);
    if (routes === undefined) this.byMethod.set(methodName, (routes = new Map<string, Map<string, Child>>()));
    let label = route;
    let classes = routes.get(route);
    if (classes === undefined) {
      if (routes.size >= MAX_ROUTES) label = OTHER;
      classes = routes.get(label) ?? new Map<string, Child>();
      routes.set(label, classes);
    }
    const statusClass = statusClassLabel(status);
    let child = classes.get(statusClass);
    if (child === undefined)
      classes.set(statusClass, (child = this.histogram.labels(this.server, label, methodName, statusClass)));
    child.observe(seconds);
  }
}

/** Injection token of the frozen `BrokerConfig`. */
export const BROKER_CONFIG = Symbol('BROKER_CONFIG');

/** Injection token of the `ServerKind` ('enduser' | 'admin') an application serves. */
export const SERVER_KIND = Symbol('SERVER_KIND');

import { type CanActivate, RequestMethod, type Type } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { APP_GUARD, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { TestingModule } from '@nestjs/testing';
import { isObservable, lastValueFrom } from 'rxjs';

/** One route Nest's router serves, read from the controllers' metadata the way its router explorer reads it. */
export interface NestRoute {
  /** `GET /oauth2/jwks.json`: the method and the full path. */
  readonly route: string;
  readonly controller: Type;
  readonly handler: (...args: unknown[]) => unknown;
  /** `@UseGuards` of the controller, then of the handler (what runs after the global guards). */
  readonly guards: readonly (Type<CanActivate> | CanActivate)[];
}

function paths(value: unknown): string[] {
  const list = Array.isArray(value) ? (value as unknown[]) : [value ?? '/'];
  return list.map((item) => String(item).replace(/^\/+|\/+$/g, ''));
}

function discovery(moduleRef: TestingModule): DiscoveryService {
  try {
    return moduleRef.get(DiscoveryService);
  } catch {
    throw new Error('routesOf/globalGuardsOf: import DiscoveryModule next to the module under test');
  }
}

/**
 * Every route of the compiled module's controllers, sorted by path then method. Compile the
 * module with `DiscoveryModule` imported next to it.
 */
export function routesOf(moduleRef: TestingModule): NestRoute[] {
  const scanner = moduleRef.get(MetadataScanner);
  const routes: NestRoute[] = [];
  for (const wrapper of discovery(moduleRef).getControllers()) {
    const controller = wrapper.metatype as Type;
    const prototype = controller.prototype as Record<string, (...args: unknown[]) => unknown>;
    const prefixes = paths(Reflect.getMetadata(PATH_METADATA, controller));
    const classGuards = (Reflect.getMetadata(GUARDS_METADATA, controller) ?? []) as NestRoute['guards'];
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as NestRoute['handler'];
      const path: unknown = Reflect.getMetadata(PATH_METADATA, handler);
      if (path === undefined) continue;
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      const guards = [
        ...classGuards,
        ...((Reflect.getMetadata(GUARDS_METADATA, handler) ?? []) as NestRoute['guards']),
      ];
      for (const prefix of prefixes)
        for (const own of paths(path))
          routes.push({
            route: `${method} /${[prefix, own].filter((part) => part !== '').join('/')}`,
            controller,
            handler,
            guards,
          });
    }
  }
  const key = (route: NestRoute): string => `${route.route.split(' ')[1]} ${route.route.split(' ')[0]}`;
  return routes.sort((a, b) => key(a).localeCompare(key(b)));
}

/**
 * The guards bound as `APP_GUARD` anywhere in the compiled module (every route passes them
 * first), as instantiated: `guard.constructor` is the class.
 */
export function globalGuardsOf(moduleRef: TestingModule): CanActivate[] {
  return discovery(moduleRef)
    .getProviders()
    .filter((wrapper) => typeof wrapper.token === 'string' && wrapper.token.startsWith(`${APP_GUARD} `))
    .map((wrapper) => wrapper.instance as CanActivate);
}

/**
 * Runs `guard` for `route` on an HTTP request the way Nest's router does (the route's handler
 * and controller in the execution context): its verdict, or the error it threw.
 */
export async function runGuard(
  guard: CanActivate,
  route: NestRoute,
  request: object,
  response: object = { append: () => undefined },
): Promise<boolean | Error> {
  const context = new ExecutionContextHost([request, response, () => undefined], route.controller, route.handler);
  context.setType('http');
  try {
    const verdict = guard.canActivate(context);
    return isObservable(verdict) ? await lastValueFrom(verdict) : await verdict;
  } catch (error) {
    return error as Error;
  }
}

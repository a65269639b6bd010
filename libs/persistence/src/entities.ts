import { InstallationEntity } from './installation/installation.entity';
import { REGISTRY_ENTITIES } from './registry/registry.entities';

/** Every TypeORM entity of the broker. */
export const ENTITIES = [InstallationEntity, ...REGISTRY_ENTITIES];

import { InstallationEntity } from './installation/installation.entity';

/** Every TypeORM entity of the broker. */
export const ENTITIES = [InstallationEntity];

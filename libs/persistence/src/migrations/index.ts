import { Installation1763780000000 } from './1763780000000-installation';

/** Every migration, oldest first. A schema change is a new file appended here. */
export const MIGRATIONS = [Installation1763780000000];

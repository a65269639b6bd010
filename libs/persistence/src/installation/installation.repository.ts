import type { DataSource } from 'typeorm';
import { InstallationEntity } from './installation.entity';

/** Identity of this broker deployment. */
export interface Installation {
  readonly id: string;
  readonly createdAt: Date;
}

export class InstallationRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Returns the installation record, creating it on first start (race-free: ON CONFLICT). */
  async ensure(): Promise<Installation> {
    await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(InstallationEntity)
      .values({ singleton: true })
      .orIgnore()
      .execute();
    const row = await this.dataSource.getRepository(InstallationEntity).findOneByOrFail({ singleton: true });
    return { id: row.id, createdAt: row.createdAt };
  }
}
